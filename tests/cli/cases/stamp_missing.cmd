stamp testdata/nope.pt
