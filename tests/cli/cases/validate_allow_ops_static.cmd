validate --no-load --allow-ops tests/cli/data/allowed_ops.txt testdata/traced_cnn.pt
