export --python testdata/models/tiny_models.py:Net -i 1x4 --dynamic-batch -o /tmp/tsctl-never-written.pt2
