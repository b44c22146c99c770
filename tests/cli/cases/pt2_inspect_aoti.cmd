inspect --no-records testdata/pt2/cnn_aoti_stub.pt2
