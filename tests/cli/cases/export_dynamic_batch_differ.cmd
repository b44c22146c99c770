export --python testdata/models/tiny_models.py:TwoInputs -i 2x6 -i 3:int64 --dynamic-batch -o /tmp/tsctl-never-written.pt2
