report testdata/traced_cnn.pt --rtol 0.1
