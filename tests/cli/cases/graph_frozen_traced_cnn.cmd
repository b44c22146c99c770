graph --frozen testdata/traced_cnn.pt
