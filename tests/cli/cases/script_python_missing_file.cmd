script --python testdata/models/nope.py:Net -o /tmp/tsctl-case-never-written.pt
