validate --input 2x3 testdata/cuda_pinned.pt
