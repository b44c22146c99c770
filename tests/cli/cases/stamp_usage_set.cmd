stamp --set novalue testdata/with_extra.pt
