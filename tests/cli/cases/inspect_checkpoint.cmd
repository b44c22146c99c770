inspect testdata/bad/checkpoint.pth
