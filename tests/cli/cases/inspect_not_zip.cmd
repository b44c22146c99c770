inspect testdata/bad/not_zip.pt
