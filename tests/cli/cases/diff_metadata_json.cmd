diff --json --only extra testdata/diff/base.pt testdata/diff/metadata.pt
