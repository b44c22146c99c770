// What the LibTorch this plugin runs registers, for tsctl compat
// --dump-runtime torch (TorchBackend::Registry).
#pragma once

#include <string>

namespace tsctl {

// tsctl compat's data format (lib/src/commands/compat_data.cc): "runtime
// torch VERSION", the file-format and bytecode versions the loaders read,
// every custom class, every upgrader (where the headers declare the version
// map), every operator with its overload.
std::string RegistryText();

}  // namespace tsctl
