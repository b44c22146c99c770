validate --no-load --format junit --skip zip.crc testdata/bad/crc_mismatch.pt
