validate -m all --val-range nope:0,1 testdata/scripted_multi.pt
