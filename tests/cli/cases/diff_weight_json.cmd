diff --json testdata/diff/base.pt testdata/diff/weight.pt
