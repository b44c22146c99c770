graph --load-library /nonexistent/libtsctl_missing_ops.so testdata/traced_cnn.pt
