inspect --no-code testdata/quantized_static.pt
