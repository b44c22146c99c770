validate --no-load --format junit testdata/bad/crc_mismatch.pt testdata/with_extra.pt
