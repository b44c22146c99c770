validate --reference testdata/args/returns_number.reference.pt testdata/args/returns_number.pt
