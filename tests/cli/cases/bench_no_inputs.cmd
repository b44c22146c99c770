bench testdata/scripted_multi.pt
