stamp --dry-run --no-auto --meta tests/cli/data/meta_array.json testdata/with_extra.pt
