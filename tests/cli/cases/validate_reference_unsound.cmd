validate --input 2x3 --save-reference /dev/null testdata/verdict/guess_noisy.pt
