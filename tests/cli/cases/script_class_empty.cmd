script testdata/models/net.ts --class= -o /tmp/tsctl-never-written.pt
