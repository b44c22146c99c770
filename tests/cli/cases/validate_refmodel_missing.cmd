validate --reference-model testdata/diff/missing.pt testdata/diff/base.pt
