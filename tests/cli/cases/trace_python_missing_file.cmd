trace --python testdata/models/nope.py:Net --input 1x4 -o /tmp/tsctl-never-written.pt
