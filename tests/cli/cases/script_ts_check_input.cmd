script testdata/models/net.ts --check-input 1x4 -o /tmp/tsctl-never-written.pt
