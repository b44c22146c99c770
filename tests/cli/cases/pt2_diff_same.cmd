diff testdata/pt2/cnn.pt2 testdata/pt2/cnn.pt2
