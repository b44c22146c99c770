diff testdata/diff/base.pt
