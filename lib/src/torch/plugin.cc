// The plugin's entry point, found with dlsym by GetTorchBackend().
#include "backend.h"

extern "C" __attribute__((visibility("default"))) const tsctl::TorchBackend* tsctl_torch_backend_v1() {
  return tsctl::CreateTorchBackend();
}
