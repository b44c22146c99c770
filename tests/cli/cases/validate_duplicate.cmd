validate --no-load testdata/bad/duplicate_record.pt
