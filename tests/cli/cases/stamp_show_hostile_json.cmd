stamp --show --json tests/fuzz/regression/hostile/13_stamp_show_json_invalid_utf8/m_5309.pt
