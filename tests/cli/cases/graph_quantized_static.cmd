graph testdata/quantized_static.pt
