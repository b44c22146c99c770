validate --no-load testdata/pt2/two_input.pt2
