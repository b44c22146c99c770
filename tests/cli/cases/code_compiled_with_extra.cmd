code --compiled testdata/with_extra.pt
