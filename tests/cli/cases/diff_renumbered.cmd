diff testdata/diff/base.pt testdata/diff/renumbered.pt
