code --class Linear testdata/scripted_multi.pt
