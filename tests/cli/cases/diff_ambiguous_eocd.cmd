diff tests/fuzz/regression/hostile/15_reader_differential/benign.pt tests/fuzz/regression/hostile/15_reader_differential/eocd_diff.pt
