code testdata/scripted_multi.pt
