validate --data-loader-script /dev/null testdata/traced_cnn.pt
