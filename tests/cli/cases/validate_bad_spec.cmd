validate --input 1xbx3 testdata/traced_cnn.pt
