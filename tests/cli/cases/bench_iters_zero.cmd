bench --iters 0 testdata/traced_cnn.pt
