stamp --meta testdata/bad/not_zip.pt testdata/with_extra.pt
