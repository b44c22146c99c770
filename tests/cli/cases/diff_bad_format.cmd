diff --format xml testdata/diff/base.pt testdata/diff/weight.pt
