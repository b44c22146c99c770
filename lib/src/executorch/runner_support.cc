// tsctl-pte-runner's helpers (runner_support.h).
#include "runner_support.h"

#include "../zip/npz.h"
#include "tsctl/error.h"

#include <fstream>
#include <iterator>
#include <string>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/kernel/operator_registry.h>

#include <cmath>
#include <cstring>

// The threadpool's calls, declared here: PyPI's executorch 1.5.1 wheel ships
// libexecutorch_threadpool.so but not its header (extension/threadpool/
// threadpool.h; only threadpool_guard.h). These are upstream's declarations
// of the functions tsctl calls, which its own runners call for --cpu_threads
// (examples/models/llama); the link fails if the library lacks them.
namespace executorch::extension::threadpool {
class ThreadPool {
 public:
  size_t get_thread_count() const;
  bool _unsafe_reset_threadpool(uint32_t num_threads);
};
ThreadPool* get_threadpool();
}  // namespace executorch::extension::threadpool

namespace tsctl {

using nlohmann::json;

void SetThreads(uint32_t threads) {
  if (auto* pool = executorch::extension::threadpool::get_threadpool()) pool->_unsafe_reset_threadpool(threads);
}

size_t Threads() {
  auto* pool = executorch::extension::threadpool::get_threadpool();
  return pool ? pool->get_thread_count() : 0;
}

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


namespace {

// A tensor's elements in C order (a tensor of another dim order copied by its strides).
std::string COrder(const executorch::aten::Tensor& t, size_t elem) {
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  const auto* p = static_cast<const char*>(t.const_data_ptr());
  const size_t n = static_cast<size_t>(t.numel());
  const ssize_t dims = t.dim();
  bool contiguous = true;
  int64_t expect = 1;
  for (ssize_t d = dims - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expect) contiguous = false;
    expect *= sizes[d];
  }
  if (contiguous) return std::string(p, n * elem);
  std::string out(n * elem, '\0');
  std::vector<int64_t> at(static_cast<size_t>(dims), 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t offset = 0;
    for (ssize_t d = 0; d < dims; ++d) offset += at[d] * strides[d];
    std::memcpy(&out[i * elem], p + offset * static_cast<int64_t>(elem), elem);
    for (ssize_t d = dims - 1; d >= 0 && ++at[d] == sizes[d]; --d) at[d] = 0;
  }
  return out;
}

std::string Npy(const executorch::runtime::EValue& v, size_t index) {
  const std::string what = "value " + std::to_string(index);
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    const DtypeInfo* d = DtypeByValue(static_cast<int>(t.scalar_type()));
    if (!d) throw Error(ErrorKind::kUsage, what + ": a dtype tsctl does not know");
    return NpyFile(*d, std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), COrder(t, d->size), what);
  }
  const char* name = v.isInt() ? "int64" : v.isDouble() ? "float64" : v.isBool() ? "bool" : nullptr;
  if (!name) throw Error(ErrorKind::kUsage, what + ": NumPy's format holds tensors and numbers, not this value");
  const int64_t i = v.isInt() ? v.toInt() : 0;
  const double x = v.isDouble() ? v.toDouble() : 0;
  const bool b = v.isBool() && v.toBool();
  const std::string bytes = v.isInt()      ? std::string(reinterpret_cast<const char*>(&i), 8)
                            : v.isDouble() ? std::string(reinterpret_cast<const char*>(&x), 8)
                                           : std::string(1, b ? '\1' : '\0');
  return NpyFile(*DtypeByName(name), {}, bytes, what);
}

}  // namespace

std::string NumpyValues(const std::vector<executorch::runtime::EValue>& values, bool npz) {
  if (!npz) {
    if (values.size() != 1 || !values[0].isTensor()) {
      throw Error(ErrorKind::kUsage, "an .npy file holds one tensor; these are " + std::to_string(values.size()) +
                                         " values (save them to an .npz file)");
    }
    return Npy(values[0], 0);
  }
  std::vector<std::pair<std::string, std::string>> arrays;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].isNone()) arrays.emplace_back(NpzName(arrays.size()), Npy(values[i], i));
  }
  return NpzFile(arrays);
}

std::string DtypeNameOf(int value) {
  const DtypeInfo* d = DtypeByValue(value);
  return d ? d->name : "scalar type " + std::to_string(value);
}

std::string ErrorName(executorch::runtime::Error e) { return std::string(executorch::runtime::to_string(e)) + " (" + std::to_string(static_cast<int>(e)) + ")"; }

// FNV-1a over a tensor's bytes: two runs' outputs compared.
static uint64_t Hash(const void* data, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  return h;
}

json DescribeValue(const executorch::runtime::EValue& v, uint64_t& hash) {
  json o;
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    o["kind"] = "tensor";
    o["dtype"] = DtypeNameOf(static_cast<int>(t.scalar_type()));
    o["shape"] = std::vector<int64_t>(t.sizes().begin(), t.sizes().end());
    int64_t nonfinite = 0;
    if (t.scalar_type() == executorch::aten::ScalarType::Float) {
      const float* p = t.const_data_ptr<float>();
      for (ssize_t i = 0; i < t.numel(); ++i) nonfinite += !std::isfinite(p[i]);
    } else if (t.scalar_type() == executorch::aten::ScalarType::Double) {
      const double* p = t.const_data_ptr<double>();
      for (ssize_t i = 0; i < t.numel(); ++i) nonfinite += !std::isfinite(p[i]);
    }
    o["nonfinite"] = nonfinite;
    hash = Hash(t.const_data_ptr(), t.nbytes());
  } else if (v.isInt()) {
    o = {{"kind", "int"}, {"value", v.toInt()}};
    hash = static_cast<uint64_t>(v.toInt());
  } else if (v.isDouble()) {
    o = {{"kind", "float"}, {"value", v.toDouble()}, {"nonfinite", std::isfinite(v.toDouble()) ? 0 : 1}};
    const double d = v.toDouble();
    hash = Hash(&d, sizeof d);
  } else if (v.isBool()) {
    o = {{"kind", "bool"}, {"value", v.toBool()}};
    hash = v.toBool();
  } else {
    o = {{"kind", v.isNone() ? "none" : "tag " + std::to_string(static_cast<int>(v.tag))}};
    hash = 0;
  }
  return o;
}


// The method's inputs from its metadata (`keep` holds the tensors); false,
// with m["input_error"], for one tsctl cannot make.
}  // namespace tsctl
