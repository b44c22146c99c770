graph --inlined --max-nodes 0 testdata/traced_cnn.pt
