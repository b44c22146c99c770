code --json testdata/scripted_multi.pt
