inspect --no-code testdata/bad/path_traversal.pt
