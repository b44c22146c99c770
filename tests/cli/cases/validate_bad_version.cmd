validate testdata/bad/bad_version.pt
