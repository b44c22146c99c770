validate testdata/args/no_forward.pt
