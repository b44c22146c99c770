graph --inlined testdata/renamed_root.pt
