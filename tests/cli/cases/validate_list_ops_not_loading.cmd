validate --list-ops testdata/bad/checkpoint.pth testdata/traced_cnn.pt
