stamp --repair testdata/with_extra.pt
