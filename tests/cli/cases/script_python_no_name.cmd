script --python testdata/models/tiny_models.py:nope -o /tmp/tsctl-never-written.pt
