inspect testdata/bad/missing_data_pkl.pt
