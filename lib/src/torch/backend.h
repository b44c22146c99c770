#pragma once

#include "tsctl/torch_backend.h"

namespace tsctl {

// The process's one TorchBackend; installs the producer hook on first call.
const TorchBackend* CreateTorchBackend();

}  // namespace tsctl
