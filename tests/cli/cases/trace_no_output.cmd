trace testdata/traced_cnn.pt --input 1x3x32x32
