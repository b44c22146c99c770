bench --iters -5 testdata/traced_cnn.pt
