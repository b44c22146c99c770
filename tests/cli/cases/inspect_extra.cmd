inspect --no-records testdata/with_extra.pt
