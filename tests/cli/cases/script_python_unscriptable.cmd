script --python testdata/models/tiny_models.py:Unscriptable -o /tmp/tsctl-never-written.pt
