inspect --json tests/fuzz/regression/hostile/01_json_invalid_utf8/r_badutf8_attr_0.pt
