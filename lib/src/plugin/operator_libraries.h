// Custom operator libraries, loaded into the process that loads archives.
#pragma once

#include <string>
#include <vector>

namespace tsctl {

// Loads operator libraries (torchvision's _C*.so, TORCH_LIBRARY extensions)
// with dlopen(RTLD_NOW | RTLD_GLOBAL), in order; call it in the process that
// will load the archive, after the LibTorch plugin and before the archive
// (the plugin's methods do it with their options' `load_libraries`).
// Loading a library twice is harmless. Throws tsctl::Error (kUnavailable)
// naming the first library that fails and the loader's reason, (kUsage) for
// an empty path.
void LoadOperatorLibraries(const std::vector<std::string>& paths);

}  // namespace tsctl
