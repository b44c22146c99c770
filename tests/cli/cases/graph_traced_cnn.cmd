graph testdata/traced_cnn.pt
