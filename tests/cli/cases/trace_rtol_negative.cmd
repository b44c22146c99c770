trace --rtol -1 testdata/traced_cnn.pt --input 1x3x32x32 -o /tmp/tsctl-never-written.pt
