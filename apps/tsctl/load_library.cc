// --load-library, TSCTL_LOAD_LIBRARIES and --allow-load-hooks, shared by the
// commands that load archives into LibTorch.
#include "cli.h"
#include "tsctl/torch_backend.h"

namespace tsctl::cli {

CLI::Option* AddAllowLoadHooksFlag(CLI::App* sub, bool& allow, const std::string& help) {
  return sub->add_flag("--allow-load-hooks", allow,
                       !help.empty() ? help
                                     : "Load an archive whose code runs at load time (a custom __setstate__) or reads "
                                       "files or unchecked memory (ts.hooks); without it such an archive is refused "
                                       "(exit 1), as validate refuses it. Other failed checks (zip.*, ts.pickle, "
                                       "ts.storage, ...) always refuse");
}

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
