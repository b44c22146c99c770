stamp testdata/with_extra.pt --meta testdata/nope.json
