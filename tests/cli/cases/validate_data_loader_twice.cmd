validate --data-loader-script tests/cli/data/data_loader.py --load-inputs tests/cli/data/none.pt testdata/traced_cnn.pt
