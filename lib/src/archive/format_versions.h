// Which TorchScript archive format versions each LibTorch release reads,
// from tsctl's own table. plugin/format_support.h asks the loaded LibTorch
// plugin first.
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

// The table's row for a LibTorch version ("1.13.1", "2.15.0+cu130", or ""
// for none): the newest row not newer than it; the newest row for "" and the
// oldest for a version older than every row. Never from the plugin.
FormatVersionRange TableFormatVersions(const std::string& libtorch_version);

}  // namespace tsctl
