code --compiled testdata/traced_cnn.pt
