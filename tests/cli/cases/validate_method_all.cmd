validate --method all testdata/scripted_multi.pt
