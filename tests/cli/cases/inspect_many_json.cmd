inspect --json testdata/with_extra.pt testdata/renamed_root.pt
