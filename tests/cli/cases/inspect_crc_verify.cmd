inspect --verify --no-code testdata/bad/crc_mismatch.pt
