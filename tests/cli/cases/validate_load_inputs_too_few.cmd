validate --load-inputs testdata/args/flat.inputs.npz testdata/args/pair.pt
