// Why LibTorch cannot load an archive that calls operators it does not have.
#pragma once

#include <string>
#include <vector>

namespace tsctl {

// True if this process's LibTorch has `op` ("ns::name" or, with an overload,
// "ns::name.overload") registered.
bool OperatorRegistered(const std::string& op);

// The operators the archive at `path` calls (its static list, read without
// LibTorch) that this process's LibTorch has not registered.
std::vector<std::string> MissingOperators(const std::string& path);

// One line about `missing` (non-empty): which operators, and for each
// namespace the library that provides them when it can be found (for
// torchvision::, the _C library of the torchvision next to the LibTorch in
// use), else a --load-library hint.
std::string DescribeMissingOperators(const std::vector<std::string>& missing);

// MissingOperators + DescribeMissingOperators; "" when nothing is missing or
// the archive cannot be read. Never throws.
std::string DiagnoseMissingOperators(const std::string& path);

}  // namespace tsctl
