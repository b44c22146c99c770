stamp --output x.pt testdata/with_extra.pt testdata/traced_cnn.pt
