inspect testdata/pt2/two_input.pt2
