validate --no-load tests/fuzz/regression/hostile/15_reader_differential/case_diff.pt
