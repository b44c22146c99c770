validate --allow-load-hooks --no-infer testdata/hooks/setstate_reads_file.pt
