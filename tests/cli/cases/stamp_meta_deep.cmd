stamp --dry-run --no-auto --meta tests/fuzz/regression/hostile/21_deep_json/md40k_a.json testdata/with_extra.pt
