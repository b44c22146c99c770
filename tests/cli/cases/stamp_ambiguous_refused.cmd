stamp --dry-run --no-auto --set a=1 tests/fuzz/regression/hostile/15_reader_differential/root_diff.pt
