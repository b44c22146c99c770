validate --no-load --skip zip.crc --skip torch.run testdata/bad/crc_mismatch.pt
