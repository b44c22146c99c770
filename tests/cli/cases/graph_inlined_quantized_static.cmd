graph --inlined testdata/quantized_static.pt
