bench --threads 0 testdata/traced_cnn.pt
