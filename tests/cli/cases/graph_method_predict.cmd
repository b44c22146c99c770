graph --method predict testdata/scripted_multi.pt
