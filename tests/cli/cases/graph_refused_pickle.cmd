graph testdata/bad/deep_constants.pt
