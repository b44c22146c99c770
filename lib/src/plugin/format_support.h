// Which TorchScript archive format versions this process's LibTorch reads:
// asked of the loaded LibTorch plugin when this process has one, else taken
// from tsctl's own table (archive/format_versions.h), so that builds without
// LibTorch, and commands that never load it, need neither LibTorch's headers
// nor its start-up.
#pragma once

#include "../archive/format_versions.h"

namespace tsctl {

// The range of the loaded plugin, else the table's row for the LibTorch this
// tsctl was configured with (TSCTL_LIBTORCH_VERSION), else its newest row.
FormatVersionRange SupportedFormatVersions();

}  // namespace tsctl
