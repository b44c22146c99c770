migrate testdata/traced_cnn.pt -o x.pt2 --bench-iters 0
