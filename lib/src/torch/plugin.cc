// The plugin's entry points, found with dlsym by LoadTorchPlugin().
#include "backend.h"
#include "plugin_abi.h"

TSCTL_PLUGIN_EXPORT int tsctl_torch_plugin_abi() { return tsctl::kTorchPluginAbi; }

TSCTL_PLUGIN_EXPORT const tsctl::TorchBackend* tsctl_torch_plugin() { return tsctl::CreateTorchBackend(); }
