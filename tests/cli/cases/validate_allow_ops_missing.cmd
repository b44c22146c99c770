validate --no-load --allow-ops testdata/nope.txt testdata/traced_cnn.pt
