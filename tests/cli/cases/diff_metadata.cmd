diff testdata/diff/base.pt testdata/diff/metadata.pt
