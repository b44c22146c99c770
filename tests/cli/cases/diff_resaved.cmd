diff testdata/diff/base.pt testdata/diff/resaved.pt
