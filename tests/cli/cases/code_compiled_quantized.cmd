code --compiled testdata/quantized.pt
