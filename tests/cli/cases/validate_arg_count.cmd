validate --input 2x3 --input 2 --input 3 testdata/scripted_multi.pt
