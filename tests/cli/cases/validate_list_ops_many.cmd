validate --list-ops testdata/traced_cnn.pt testdata/scripted_multi.pt
