code --compiled testdata/scripted_multi.pt
