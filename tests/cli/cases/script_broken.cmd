script testdata/models/broken.ts -o /tmp/tsctl-never-written.pt
