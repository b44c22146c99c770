validate --reference testdata/args/missing.pt testdata/traced_cnn.pt
