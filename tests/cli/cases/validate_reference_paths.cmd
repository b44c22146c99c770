validate --reference testdata/args/all_args.perturbed.pt testdata/args/all_args.pt
