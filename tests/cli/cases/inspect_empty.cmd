inspect testdata/bad/empty.pt
