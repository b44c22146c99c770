graph --inlined testdata/quantized.pt
