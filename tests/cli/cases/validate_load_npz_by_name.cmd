validate --load-inputs testdata/args/pair.inputs.npz --reference testdata/args/pair.expected.pt testdata/args/pair.pt
