diff testdata/diff/base.pt testdata/diff/op_added.pt
