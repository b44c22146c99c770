script --python testdata/models/tiny_models.py:not_a_module -o /tmp/tsctl-never-written.pt
