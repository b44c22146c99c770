diff testdata/diff/base.pt testdata/diff/shape.pt
