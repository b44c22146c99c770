stamp --dry-run --no-auto --file ÿþ=README.md testdata/with_extra.pt
