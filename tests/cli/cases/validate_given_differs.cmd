validate --input 2x3 testdata/verdict/guess_noisy.pt
