graph -o - testdata/traced_cnn.pt
