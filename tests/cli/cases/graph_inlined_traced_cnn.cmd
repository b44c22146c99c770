graph --inlined testdata/traced_cnn.pt
