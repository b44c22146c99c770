graph testdata/pt2/transformer.pt2
