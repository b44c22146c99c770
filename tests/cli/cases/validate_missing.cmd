validate testdata/nope.pt
