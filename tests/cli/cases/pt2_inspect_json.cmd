inspect --json testdata/pt2/cnn.pt2
