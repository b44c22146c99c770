bench --percentiles 50,101 --input 1x3x32x32 testdata/traced_cnn.pt
