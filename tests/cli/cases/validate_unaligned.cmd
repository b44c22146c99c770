validate --no-load testdata/unaligned.pt
