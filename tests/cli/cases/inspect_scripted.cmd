inspect testdata/scripted_multi.pt
