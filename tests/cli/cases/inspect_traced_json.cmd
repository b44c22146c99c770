inspect --json testdata/traced_cnn.pt
