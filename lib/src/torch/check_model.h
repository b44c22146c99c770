#pragma once

#include <string>

#include "tsctl/torch_backend.h"
#include "model_check.h"

namespace tsctl {

// See TorchBackend::CheckModel.
ModelCheckResult CheckModel(const ModelCheckOptions& options);

}  // namespace tsctl
