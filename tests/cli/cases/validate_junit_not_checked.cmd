validate --no-load --format junit testdata/with_extra.pt testdata/no_such_archive.pt
