validate --no-load --allow-ops tests/cli/data/allow_benign.txt tests/fuzz/regression/hostile/15_reader_differential/root_diff.pt
