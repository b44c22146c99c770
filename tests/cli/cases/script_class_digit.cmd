script testdata/models/net.ts --class 1abc -o /tmp/tsctl-never-written.pt
