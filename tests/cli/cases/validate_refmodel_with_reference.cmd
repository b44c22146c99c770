validate --reference-model testdata/diff/base.pt --reference testdata/traced_cnn.reference.pt testdata/diff/base.pt
