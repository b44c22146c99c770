validate --data-loader-script tests/cli/data/data_loader.py:nothing testdata/traced_cnn.pt
