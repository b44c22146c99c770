validate --method nope testdata/traced_cnn.pt
