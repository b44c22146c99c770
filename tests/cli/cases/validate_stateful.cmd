validate --input 2x3 testdata/verdict/stateful.pt
