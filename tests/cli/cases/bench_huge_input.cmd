bench --input 100000x100000x100x100:float32 testdata/traced_cnn.pt
