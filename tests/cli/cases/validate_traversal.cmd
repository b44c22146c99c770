validate --no-load testdata/bad/path_traversal.pt
