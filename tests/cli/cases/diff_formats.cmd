diff testdata/traced_cnn.pt testdata/mobile.ptl
