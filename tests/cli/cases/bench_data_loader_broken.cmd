bench --data-loader-script tests/cli/data/data_loader.py:broken testdata/traced_cnn.pt
