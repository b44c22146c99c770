graph --inlined --max-nodes 10 testdata/traced_cnn.pt
