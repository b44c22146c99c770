script testdata/models/no_forward.ts --input 2x4 -o /tmp/tsctl-case-never-written.pt
