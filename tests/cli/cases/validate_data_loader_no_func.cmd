validate --data-loader-script tests/cli/data/data_loader.py:no_such testdata/traced_cnn.pt
