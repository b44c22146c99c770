validate --no-load testdata/hooks/forward_reads_file.pt
