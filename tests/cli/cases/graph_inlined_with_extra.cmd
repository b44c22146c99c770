graph --inlined testdata/with_extra.pt
