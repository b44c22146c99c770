graph -m other testdata/pt2/cnn.pt2
