// tsctl-pte-runner's helpers (runner_support.h).
#include "runner_support.h"

#include <fstream>
#include <iterator>
#include <string>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/kernel/operator_registry.h>

namespace tsctl {

using nlohmann::json;

json Registry() {
  json kernels = json::array();
  for (const auto& k : executorch::runtime::get_registered_kernels()) {
    const char* key = k.kernel_key_.data();
    kernels.push_back({{"name", k.name_ ? k.name_ : ""}, {"key", key ? key : ""}});
  }
  json backends = json::array();
  for (size_t i = 0; i < executorch::runtime::get_num_registered_backends(); ++i) {
    auto name = executorch::runtime::get_backend_name(i);
    if (name.ok()) backends.push_back(*name);
  }
  json out = {{"kernels", kernels}, {"backends", backends}};
  // ET_ENABLE_DEPRECATED_CONSTANT_BUFFER is compiled into the runtime, not
  // said by any call: its #else branch logs "PTE file relies on the
  // constant_buffer path, which is disabled in this build", a string present
  // in the library only when the path is compiled out.
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos || line.find("libexecutorch.so") == std::string::npos) continue;
    std::ifstream lib(line.substr(slash), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(lib)), std::istreambuf_iterator<char>());
    out["constant_buffer"] = bytes.find("relies on the constant_buffer path, which is disabled") == std::string::npos;
    break;
  }
  return out;
}

double NextUniform(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<double>(state >> 11) / static_cast<double>(uint64_t{1} << 53);
}

// Element `i` of `p` (of dtype `d`) set to `v` (integers truncated, bool v != 0).
void PutElement(void* p, const DtypeInfo& d, ssize_t i, double v) {
  if (d.kind == tsctl::DtypeKind::kFloat && d.size == 4) static_cast<float*>(p)[i] = static_cast<float>(v);
  else if (d.kind == tsctl::DtypeKind::kFloat && d.size == 8) static_cast<double*>(p)[i] = v;
  else if (d.kind == tsctl::DtypeKind::kBool) static_cast<bool*>(p)[i] = v != 0;
  else if (d.kind == tsctl::DtypeKind::kSigned && d.size == 8) static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v);
  else if (d.kind == tsctl::DtypeKind::kSigned && d.size == 4) static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
  else if (d.kind == tsctl::DtypeKind::kSigned && d.size == 2) static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v);
  else if (d.kind == tsctl::DtypeKind::kSigned && d.size == 1) static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
  else if (d.kind == tsctl::DtypeKind::kUnsigned && d.size == 1) static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v);
}

}  // namespace tsctl
