validate --reference-model testdata/with_extra.pt --input 2x4:float32:ones testdata/diff/base.pt
