validate testdata/verdict/guess_noisy.pt
