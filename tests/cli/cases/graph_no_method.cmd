graph --method nope testdata/scripted_multi.pt
