graph testdata/scripted_multi.pt
