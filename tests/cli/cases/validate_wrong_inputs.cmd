validate --input 1x3x32x32 testdata/scripted_multi.pt
