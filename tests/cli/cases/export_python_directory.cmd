export --python testdata/models:Net -i 2x4 -o /tmp/tsctl-never-written.pt2
