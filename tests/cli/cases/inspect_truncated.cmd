inspect testdata/bad/truncated.pt
