validate --input 1x3x32x32 --save-reference /dev/null testdata/traced_cnn.pt
