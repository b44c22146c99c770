migrate testdata/traced_cnn.pt
