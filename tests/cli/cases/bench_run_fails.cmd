bench --input 1x3x32x32 --iters 2 testdata/scripted_multi.pt
