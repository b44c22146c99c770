code --compiled testdata/renamed_root.pt
