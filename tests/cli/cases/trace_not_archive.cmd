trace testdata/bad/checkpoint.pth --input 1x4 -o /tmp/tsctl-never-written.pt
