report testdata/diff/base.pt testdata/bad/not_zip.pt
