validate --data-loader-script tests/cli/data/data_loader.py:by_name testdata/traced_cnn.pt
