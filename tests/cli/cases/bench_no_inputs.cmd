bench --no-infer testdata/scripted_multi.pt
