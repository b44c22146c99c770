validate --no-load --format json tests/fuzz/regression/hostile/01_json_invalid_utf8/r_badutf8_storage_key_0.pt
