validate --load-inputs testdata/traced_cnn.reference.pt testdata/traced_cnn.pt
