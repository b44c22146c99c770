diff testdata/pt2/cnn.pt2 testdata/pt2/two_input.pt2
