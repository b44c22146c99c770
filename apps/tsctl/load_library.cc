// --load-library and TSCTL_LOAD_LIBRARIES, shared by the commands that load
// archives into LibTorch.
#include "cli.h"
#include "tsctl/torch_backend.h"

namespace tsctl::cli {

CLI::Option* AddLoadLibraryFlag(CLI::App* sub, std::vector<std::string>& libraries) {
  return sub->add_option("--load-library", libraries,
                  "Shared library of custom operators (e.g. torchvision's _C*.so) to load before the archive; "
                  "repeatable; TSCTL_LOAD_LIBRARIES adds a colon-separated list")
      ->allow_extra_args(false);
}

std::vector<std::string> OperatorLibraries(const std::vector<std::string>& flags) {
  std::vector<std::string> all = OperatorLibrariesFromEnvironment();
  all.insert(all.end(), flags.begin(), flags.end());
  return all;
}

}  // namespace tsctl::cli
