validate --skip torch.rnu testdata/traced_cnn.pt
