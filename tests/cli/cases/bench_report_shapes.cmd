bench --shapes x:1x3x8x8,2x3x8x8,4x3x8x8 --report page.html testdata/traced_cnn.pt
