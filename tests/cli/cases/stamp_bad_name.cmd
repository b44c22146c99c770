stamp --file ../evil=README.md testdata/with_extra.pt
