trace --no-infer testdata/traced_cnn.pt -o /tmp/tsctl-never-written.pt
