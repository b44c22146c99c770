frobnicate testdata/with_extra.pt
