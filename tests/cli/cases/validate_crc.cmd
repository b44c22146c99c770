validate --no-load testdata/bad/crc_mismatch.pt
