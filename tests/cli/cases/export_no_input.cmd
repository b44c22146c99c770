export --python testdata/models/tiny_models.py:Net -o /tmp/tsctl-never-written.pt2
