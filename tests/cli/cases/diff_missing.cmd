diff testdata/diff/base.pt testdata/diff/missing.pt
