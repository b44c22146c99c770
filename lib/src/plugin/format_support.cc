#include "format_support.h"

#include "plugin_abi.h"
#include "torch_server.h"

#ifndef TSCTL_LIBTORCH_VERSION
#define TSCTL_LIBTORCH_VERSION ""
#endif

namespace tsctl {

FormatVersionRange SupportedFormatVersions() {
  // What the LibTorch server said it runs, once it runs (validate starts it first).
  static FormatVersionRange from_plugin;
  if (from_plugin.from_plugin) return from_plugin;
  if (const BuildInfo* server = StartedServerInfo()) {
    const BuildInfo& info = *server;
    if (info.max_file_format > 0) {
      from_plugin.min = info.min_file_format;
      from_plugin.max = info.max_file_format;
      from_plugin.libtorch = info.libtorch_version;
      from_plugin.from_plugin = true;
      return from_plugin;
    }
  }
  return TableFormatVersions(TSCTL_LIBTORCH_VERSION);
}

}  // namespace tsctl
