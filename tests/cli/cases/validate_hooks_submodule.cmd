validate testdata/hooks/submodule_setstate.pt
