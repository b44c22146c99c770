script testdata/models/nope.ts -o /tmp/tsctl-never-written.pt
