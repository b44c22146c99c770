#pragma once

#include "plugin_abi.h"

namespace tsctl {

// The process's one TorchBackend; installs the producer hook on first call.
const TorchBackend* CreateTorchBackend();

}  // namespace tsctl
