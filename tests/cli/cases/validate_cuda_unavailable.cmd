validate --device cuda --input 1x3x32x32 testdata/traced_cnn.pt
