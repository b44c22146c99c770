validate --load-inputs testdata/args/all_args.inputs.pt testdata/args/all_args.pt
