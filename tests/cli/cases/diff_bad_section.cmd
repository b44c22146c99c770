diff --ignore weights testdata/diff/base.pt testdata/diff/weight.pt
