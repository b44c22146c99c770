inspect --json testdata/with_extra.pt testdata/bad/empty.pt
