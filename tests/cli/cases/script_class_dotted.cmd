script testdata/models/net.ts --class a.b -o /tmp/tsctl-never-written.pt
