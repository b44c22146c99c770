validate --no-load --strict testdata/unaligned.pt
