trace testdata/traced_cnn.pt --python testdata/models/tiny_models.py:Net --input 1x4 -o /tmp/tsctl-never-written.pt
