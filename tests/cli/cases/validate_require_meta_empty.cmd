validate --no-load --require-meta ,, testdata/with_extra.pt
