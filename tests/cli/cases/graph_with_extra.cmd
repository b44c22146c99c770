graph testdata/with_extra.pt
