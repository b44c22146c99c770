script testdata/models/net.ts --input 2x4 --input 2x4 -o /tmp/tsctl-case-never-written.pt
