diff --ignore code,extra,records testdata/diff/base.pt testdata/diff/op_added.pt
