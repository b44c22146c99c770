report testdata/bad/checkpoint.pth
