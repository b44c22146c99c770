stamp --show tests/fuzz/regression/hostile/10_terminal_escapes_in_inspect/esc_name.pt
