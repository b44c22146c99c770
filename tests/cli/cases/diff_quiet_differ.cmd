diff --quiet testdata/diff/base.pt testdata/diff/weight.pt
