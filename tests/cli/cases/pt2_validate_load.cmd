validate testdata/pt2/cnn.pt2
