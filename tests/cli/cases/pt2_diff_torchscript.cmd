diff testdata/traced_cnn.pt testdata/pt2/cnn.pt2
