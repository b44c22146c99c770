#pragma once

#include <vector>

#include "tsctl/archive.h"
#include "tsctl/validate.h"

namespace tsctl {

void CheckZip(const Archive& archive, const ValidateOptions& options, std::vector<CheckResult>& out);
void CheckStructure(const Archive& archive, std::vector<CheckResult>& out);

}  // namespace tsctl
