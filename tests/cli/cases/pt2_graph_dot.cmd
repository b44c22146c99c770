graph --format dot testdata/pt2/cnn.pt2
