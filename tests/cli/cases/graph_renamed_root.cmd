graph testdata/renamed_root.pt
