inspect testdata/nope.pt
