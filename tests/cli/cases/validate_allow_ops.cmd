validate --no-run --allow-ops tests/cli/data/allowed_ops.txt testdata/traced_cnn.pt
