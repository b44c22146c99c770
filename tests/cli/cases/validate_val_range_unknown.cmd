validate --val-range y:0,1 testdata/verdict/guess_log.pt
