inspect --no-code testdata/bad/duplicate_record.pt
