graph testdata/bad/bad_version.pt
