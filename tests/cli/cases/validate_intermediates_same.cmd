validate --compare-intermediates --reference-model testdata/diff/base.pt --input 2x4:float32:ones testdata/diff/resaved.pt
