bench --val-range x:2,1 testdata/verdict/guess_log.pt
