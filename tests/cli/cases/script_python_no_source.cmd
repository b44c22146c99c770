script --python testdata/models/tiny_models.py:Hidden -o /tmp/tsctl-never-written.pt
