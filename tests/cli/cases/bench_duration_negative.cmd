bench --duration -1 testdata/traced_cnn.pt
