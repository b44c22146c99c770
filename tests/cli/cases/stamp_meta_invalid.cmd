stamp --dry-run --no-auto --meta tests/cli/data/meta_invalid.json testdata/with_extra.pt
