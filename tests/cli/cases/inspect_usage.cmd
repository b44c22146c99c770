inspect --bogus testdata/with_extra.pt
