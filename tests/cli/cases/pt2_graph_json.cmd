graph --json testdata/pt2/two_input.pt2
