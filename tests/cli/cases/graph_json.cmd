graph --format json testdata/scripted_multi.pt
