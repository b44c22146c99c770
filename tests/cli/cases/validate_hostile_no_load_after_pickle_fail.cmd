validate tests/fuzz/regression/hostile/14_libtorch_huge_alloc/m_1613.pt
