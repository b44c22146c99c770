stamp testdata/with_extra.pt testdata/no_such_archive.pt --no-auto --set a=1 b=2
