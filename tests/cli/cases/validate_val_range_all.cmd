validate -m all --val-range x:0,1 testdata/scripted_multi.pt
