code testdata/bad/damaged_local_header.pt
