#pragma once

#include "tsctl/torch_backend.h"

namespace tsctl {

MakeResult TraceArchive(const TraceOptions& options);
MakeResult ScriptFromSource(const ScriptOptions& options);

}  // namespace tsctl
