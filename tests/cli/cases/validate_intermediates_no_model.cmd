validate --compare-intermediates testdata/diff/base.pt
