validate --no-load -o /dev/null --report testdata testdata/traced_cnn.pt
