graph testdata/bad/checkpoint.pth
