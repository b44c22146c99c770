validate --device gpu testdata/traced_cnn.pt
