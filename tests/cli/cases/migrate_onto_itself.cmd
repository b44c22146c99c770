migrate testdata/traced_cnn.pt -o testdata/traced_cnn.pt
