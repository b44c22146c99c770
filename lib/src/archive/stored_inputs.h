// The input specs an archive stores, as validate and bench take them when no
// inputs are given (private to lib/src).
#pragma once

#include <string>

#include "tsctl/archive.h"
#include "tsctl/inputs.h"

namespace tsctl {

// InputsFromArchive, or none when the stored record does not parse (a spec
// with an unknown dtype, a broken pickle): it is the archive's metadata, not
// the caller's flags, so it is never a usage error; the inputs are then
// found as if nothing were stored (inferred).
ArchiveInputs StoredInputs(const Archive& archive, const std::string& key);

}  // namespace tsctl
