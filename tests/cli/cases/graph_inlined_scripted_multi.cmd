graph --inlined testdata/scripted_multi.pt
