// A stand-in for libtsctl_torch.so built with another ABI version: the loader
// must refuse it in one line (tests/unit/plugin_abi_test.cc).
extern "C" __attribute__((visibility("default"))) int tsctl_torch_plugin_abi() { return 999; }
extern "C" __attribute__((visibility("default"))) const void* tsctl_torch_plugin() { return nullptr; }
