diff testdata/diff/base.pt testdata/diff/weight.pt
