validate testdata/bad/empty.pt
