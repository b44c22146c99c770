stamp testdata/with_extra.pt testdata/bad/damaged_local_header.pt --no-auto --set a=1
