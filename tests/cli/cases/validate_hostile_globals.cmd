validate --no-load tests/fuzz/regression/hostile/11_pickle_global_accepted/r_os_system_0.pt tests/fuzz/regression/hostile/11_pickle_global_accepted/r_os_system_attr_0.pt
