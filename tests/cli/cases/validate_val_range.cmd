validate --val-range x:0.5,2 --seed 7 testdata/verdict/guess_log.pt
