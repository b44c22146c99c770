migrate testdata/traced_cnn.pt --out-dir testdata/traced_cnn.pt/pt2
