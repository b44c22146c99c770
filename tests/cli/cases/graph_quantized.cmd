graph testdata/quantized.pt
