validate --no-load tests/fuzz/regression/hostile/15_reader_differential/eocd_diff.pt
