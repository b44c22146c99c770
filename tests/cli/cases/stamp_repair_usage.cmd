stamp --repair --set a=1 testdata/with_extra.pt
