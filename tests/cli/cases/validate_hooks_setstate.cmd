validate testdata/hooks/setstate_reads_file.pt
