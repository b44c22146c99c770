code --compiled testdata/quantized_static.pt
