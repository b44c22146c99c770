validate --format json --no-load testdata/bad/truncated.pt
