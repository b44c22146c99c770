stamp --dry-run --remove nope.txt testdata/with_extra.pt
