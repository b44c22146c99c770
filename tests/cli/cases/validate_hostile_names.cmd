validate --no-load tests/fuzz/regression/hostile/09_junit_control_chars/ctrl_traversal.pt tests/fuzz/regression/hostile/08_multiline_error_line/newline_name_crc.pt
