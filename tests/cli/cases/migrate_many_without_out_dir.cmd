migrate testdata/traced_cnn.pt testdata/scripted_multi.pt -o /tmp/tsctl-never-written.pt2
