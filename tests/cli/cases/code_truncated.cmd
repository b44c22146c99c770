code testdata/bad/truncated.pt
