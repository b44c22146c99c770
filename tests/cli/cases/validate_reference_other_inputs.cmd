validate --reference testdata/traced_cnn.reference.pt --input 2x3x16x16 testdata/traced_cnn.pt
