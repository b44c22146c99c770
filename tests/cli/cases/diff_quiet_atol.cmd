diff --quiet --atol 0.5 testdata/diff/base.pt testdata/diff/weight.pt
