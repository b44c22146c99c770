#include "format_support.h"

#include "plugin_abi.h"

#ifndef TSCTL_LIBTORCH_VERSION
#define TSCTL_LIBTORCH_VERSION ""
#endif

namespace tsctl {

FormatVersionRange SupportedFormatVersions() {
  // Info() also asks CUDA for devices: ask once per process.
  static FormatVersionRange from_plugin;
  if (from_plugin.from_plugin) return from_plugin;
  if (const TorchBackend* plugin = LoadedTorchBackend()) {
    BuildInfo info = plugin->Info();
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
