validate --timeout 10 --input 1x3x32x32 testdata/traced_cnn.pt
