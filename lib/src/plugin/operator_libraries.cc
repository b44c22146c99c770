// Custom operator libraries (torchvision's _C, a team's TORCH_LIBRARY
// extension): loaded into the process that loads archives, before it does.
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tsctl/error.h"
#include "operator_libraries.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

void LoadOperatorLibraries(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    if (path.empty()) throw Error(ErrorKind::kUsage, "--load-library: empty path");
    // RTLD_GLOBAL: a library may rely on symbols of one loaded before it.
    // The handle is kept for the life of the process: the operators it
    // registered must outlive every module that calls them.
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) continue;
    const char* err = dlerror();
    std::string reason = err ? err : "unknown loader error";
    // dlerror() usually starts with the path already; do not say it twice.
    if (reason.rfind(path + ": ", 0) == 0) reason = reason.substr(path.size() + 2);
    throw Error(ErrorKind::kUnavailable, "cannot load operator library " + path + ": " + reason);
  }
}

std::vector<std::string> OperatorLibrariesFromEnvironment() {
  std::vector<std::string> out;
  const char* env = std::getenv("TSCTL_LOAD_LIBRARIES");
  if (!env) return out;
  std::string text = env;
  size_t start = 0;
  while (start <= text.size()) {
    size_t colon = text.find(':', start);
    std::string part = text.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!part.empty()) out.push_back(part);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

}  // namespace tsctl
