validate --arg x=2x3 --arg k=1.5 testdata/args/all_args.pt
