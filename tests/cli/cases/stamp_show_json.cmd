stamp --show --json testdata/with_extra.pt
