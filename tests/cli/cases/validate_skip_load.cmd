validate --skip torch.load testdata/traced_cnn.pt
