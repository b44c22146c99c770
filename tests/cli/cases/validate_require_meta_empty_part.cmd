validate --no-load --require-meta producer..version testdata/with_extra.pt
