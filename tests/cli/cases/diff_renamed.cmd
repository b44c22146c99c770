diff testdata/diff/base.pt testdata/diff/renamed.pt
