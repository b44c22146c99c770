trace --python testdata/models/tiny_models.py --input 1x4 -o /tmp/tsctl-never-written.pt
