inspect --no-records testdata/pt2/transformer.pt2
