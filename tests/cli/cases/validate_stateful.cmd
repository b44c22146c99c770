validate --calls 3 --input 2x3 testdata/verdict/stateful.pt
