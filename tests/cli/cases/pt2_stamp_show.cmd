stamp --show testdata/pt2/cnn.pt2
