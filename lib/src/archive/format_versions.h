// Which TorchScript archive format versions a LibTorch reads: asked of the
// loaded LibTorch plugin when this process has one, else taken from tsctl's
// own table (so that builds without LibTorch, and commands that never load it,
// need neither LibTorch's headers nor its start-up).
#pragma once

#include <cstdint>
#include <string>

namespace tsctl {

struct FormatVersionRange {
  int64_t min = 0;
  int64_t max = 0;
  bool from_plugin = false;  // else from tsctl's table
  std::string libtorch;      // the LibTorch release the range belongs to, e.g. "1.13"
};

// The range of the loaded plugin, else the table's row for the LibTorch this
// tsctl was configured with (TSCTL_LIBTORCH_VERSION), else its newest row.
FormatVersionRange SupportedFormatVersions();

// The table's row for a LibTorch version ("1.13.1", "2.15.0+cu130", or ""
// for none): the newest row not newer than it; the newest row for "" and the
// oldest for a version older than every row. Never from the plugin.
FormatVersionRange TableFormatVersions(const std::string& libtorch_version);

}  // namespace tsctl
