validate --timeout -5 testdata/traced_cnn.pt
