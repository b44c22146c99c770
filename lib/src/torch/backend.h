#pragma once

#include "plugin_abi.h"

namespace tsctl {

// The process's one TorchBackend; installs the producer hook on first call.
const TorchBackend* CreateTorchBackend();

// Routes LibTorch's warnings (TORCH_WARN) through tsctl: shown with -v only,
// escaped, one line each. LibTorch keeps the handler per thread, so every
// thread that runs a model calls this first.
void InstallWarningHandler();

}  // namespace tsctl
