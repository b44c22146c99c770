graph --format dot testdata/traced_cnn.pt
