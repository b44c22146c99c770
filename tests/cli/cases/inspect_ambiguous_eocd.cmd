inspect --no-code tests/fuzz/regression/hostile/15_reader_differential/eocd_diff.pt
