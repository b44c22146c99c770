validate testdata/scripted_multi.pt
