script testdata/models/net.ts --class def -o /tmp/tsctl-never-written.pt
