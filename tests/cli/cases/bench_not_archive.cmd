bench testdata/bad/checkpoint.pth
