validate testdata/traced_cnn.pt
