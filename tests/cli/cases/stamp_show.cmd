stamp --show testdata/with_extra.pt
