report testdata/diff/base.pt testdata/diff/weight.pt testdata/diff/shape.pt
