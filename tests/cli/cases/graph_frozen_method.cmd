graph --frozen -m describe testdata/scripted_multi.pt
