code --compiled testdata/bad/deep_constants.pt
