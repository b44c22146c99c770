inpsect testdata/with_extra.pt
