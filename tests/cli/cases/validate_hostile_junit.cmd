validate --no-load --format junit tests/fuzz/regression/hostile/09_junit_control_chars/ctrl_traversal.pt tests/fuzz/regression/hostile/01_json_invalid_utf8/any_flip_10.pt
