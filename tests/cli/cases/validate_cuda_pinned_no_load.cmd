validate --no-load testdata/cuda_pinned.pt
