#pragma once

#include <vector>

#include "tsctl/archive.h"
#include "tsctl/torch_backend.h"
#include "tsctl/validate.h"

namespace tsctl {

void CheckZip(const Archive& archive, const ValidateOptions& options, std::vector<CheckResult>& out);
void CheckStructure(const Archive& archive, std::vector<CheckResult>& out);
// Loads and runs the archive at `path` in isolated children (one per method
// checked) and appends the torch.* checks. Throws tsctl::Error of the
// child's kind for usage errors and an unavailable plugin.
void CheckModelInChild(const Archive& archive, const std::string& path, const ValidateOptions& options,
                       ModelCheckOptions m, ArchiveReport& report);

}  // namespace tsctl
