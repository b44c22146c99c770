stamp --dry-run --no-auto --meta tests/cli/data/meta_not_utf8.json testdata/with_extra.pt
