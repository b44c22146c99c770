validate --list-ops testdata/traced_cnn.pt
