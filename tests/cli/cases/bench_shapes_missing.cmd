bench --shapes x:1x3x32x32,2x3x32x32,4x3x32x32 testdata/no_such.pt
