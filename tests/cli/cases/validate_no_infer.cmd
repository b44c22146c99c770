validate --no-infer testdata/traced_cnn.pt
