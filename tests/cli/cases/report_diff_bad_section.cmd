report testdata/diff/base.pt testdata/diff/weight.pt --only params
