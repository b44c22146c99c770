validate --data-loader-script tests/cli/data/data_loader.py testdata/traced_cnn.pt
