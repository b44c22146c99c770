validate --no-load --format json testdata/with_extra.pt testdata/no_such_archive.pt
