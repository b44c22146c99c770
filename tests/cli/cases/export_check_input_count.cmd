export --python testdata/models/tiny_models.py:Net -i 2x4 --check-input 2x4,2x4 -o /tmp/tsctl-never-written.pt2
