stamp --dry-run testdata/bad/checkpoint.pth
