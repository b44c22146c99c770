validate testdata/bad/checkpoint.pth
