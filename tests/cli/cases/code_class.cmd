code --class Block testdata/scripted_multi.pt
