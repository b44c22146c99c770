bench --warmup -1 testdata/traced_cnn.pt
