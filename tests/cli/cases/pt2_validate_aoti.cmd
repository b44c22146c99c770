validate --no-load testdata/pt2/cnn_aoti_stub.pt2
