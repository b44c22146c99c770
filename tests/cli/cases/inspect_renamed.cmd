inspect --no-records --no-code testdata/renamed_root.pt
