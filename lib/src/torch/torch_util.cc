#include "torch_util.h"
#include "view_guard.h"

#include <c10/util/Exception.h>

#include <ATen/Context.h>
#include <c10/core/QEngine.h>
#include <torch/cuda.h>

#include <dlfcn.h>

#include <cctype>
#include <optional>
#include <sstream>

#include "op_diagnosis.h"

namespace tsctl {

Error FromTorch(const std::exception& e, ErrorKind kind) {
  std::string full;
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) {
    full = c10->what_without_backtrace();
  } else {
    full = e.what();
  }
  // The first line that says something; LibTorch appends source excerpts and
  // backtraces on the lines after it.
  std::istringstream lines(full);
  std::string line, first;
  while (std::getline(lines, line)) {
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    first = line.substr(b);
    break;
  }
  if (first.empty()) first = "unknown LibTorch error";
  // "[enforce fail at inline_container.cc:165] . Attempted ..." -> "Attempted ..."
  if (first.rfind("[enforce fail at", 0) == 0) {
    size_t close = first.find("] ");
    if (close != std::string::npos) first = first.substr(close + 2);
    if (first.rfind(". ", 0) == 0) first = first.substr(2);
  }
  // Schema mismatches: name the operator and where the archive calls it.
  if (full.find("The following variants are available:") != std::string::npos) {
    size_t v = full.find("The following variants are available:");
    std::istringstream rest(full.substr(v));
    std::getline(rest, line);
    while (std::getline(rest, line)) {
      size_t b = line.find_first_not_of(" \t");
      if (b == std::string::npos) continue;
      first += " (operator " + line.substr(b, line.find('(', b) - b) + ")";
      break;
    }
  }
  // Interpreter failures: the cause is on the last line, the innermost place
  // in the archive's code is the last "File" line of the serialized traceback.
  if (first.rfind("The following operation failed in the TorchScript interpreter", 0) == 0) {
    std::string serialized = full.substr(0, full.find("Traceback of TorchScript, original code"));
    std::string cause, where;
    // The cause: the last line that starts "SomethingError: ", else the last line.
    std::istringstream all(full);
    std::string last;
    while (std::getline(all, line)) {
      size_t b = line.find_first_not_of(" \t");
      if (b == std::string::npos) continue;
      last = line.substr(b);
      size_t colon = line.find("Error: ");
      if (b == 0 && colon != std::string::npos && line.find_first_of(" ") > colon) cause = line;
    }
    if (cause.empty()) cause = last;
    if (cause.size() > 160) {  // keep the first sentence of long messages
      size_t stop = cause.find(". ", 40);
      if (stop != std::string::npos) cause.resize(stop + 1);
    }
    std::istringstream ser(serialized);
    while (std::getline(ser, line)) {
      size_t b = line.find("File \"");
      if (b != std::string::npos) where = line.substr(b);
    }
    if (!cause.empty()) {
      first = cause + (where.empty() ? "" : " at " + where);
      return Error(kind, first.size() > 400 ? first.substr(0, 400) + "..." : first, e.what());
    }
  }
  size_t file = full.find("File \"");
  if (file != std::string::npos) {
    size_t end = full.find('\n', file);
    std::string where = full.substr(file, end == std::string::npos ? std::string::npos : end - file);
    first += " at " + where;
  }
  if (first.size() > 400) first = first.substr(0, 400) + "...";
  return Error(kind, first, e.what());
}

Error FromLoadFailure(const std::exception& e, const std::string& path) {
  std::string missing = DiagnoseMissingOperators(path);
  if (missing.empty()) return FromTorch(e);
  return Error(ErrorKind::kTorch, missing, e.what());
}

torch::jit::Module LoadModule(const std::string& path) {
  try {
    torch::jit::Module module = torch::jit::load(path, torch::Device(torch::kCPU));
    KeepViewGuardIfCalled(module);
    return module;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FromLoadFailure(e, path);
  }
}

torch::jit::Method FindMethod(const torch::jit::Module& module, const std::string& name) {
  if (auto m = module.find_method(name)) return *m;
  std::string have;
  for (const auto& m : module.get_methods()) have += (have.empty() ? "" : ", ") + m.name();
  throw Error(ErrorKind::kUsage, "no method '" + name + "' (methods: " + (have.empty() ? "none" : have) + ")");
}

namespace {
std::string& CudaNotLoadedText() {
  static std::string text;
  return text;
}
}  // namespace

void LoadCudaWhereDriver() {
#ifdef TSCTL_CUDA_AT_RUN_TIME
  // Before anything asks ATen about CUDA: ATen creates its CUDA hooks on
  // the first question and keeps them, so asking first (hasCUDART) would
  // fix "no CUDA" for the life of the process.
  static bool tried = false;
  if (tried) return;
  tried = true;
  // The CUDA runtime finds the driver the same way; without it every CUDA
  // call says "Found no NVIDIA driver", so loading the libraries buys nothing.
  if (!::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    CudaNotLoadedText() = "no NVIDIA driver (libcuda.so.1 does not load), so tsctl did not load LibTorch's CUDA libraries";
    return;
  }
  // Beside libtorch_cpu, whichever folder that came from.
  if (!::dlopen((LibTorchFolder() + "libtorch_cuda.so").c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    const char* why = ::dlerror();
    CudaNotLoadedText() = std::string("LibTorch's CUDA library did not load: ") + (why ? why : "unknown error");
  }
#endif
}

std::string LibTorchCpuPath() {
  Dl_info dl{};
  if (::dladdr(reinterpret_cast<void*>(&at::globalContext), &dl) != 0 && dl.dli_fname) return dl.dli_fname;
  return "";
}

std::string LibTorchFolder() {
  std::string path = LibTorchCpuPath();
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.erase(slash + 1);
}

bool CudaCompiled() {
#ifdef TSCTL_CUDA_AT_RUN_TIME
  return true;
#else
  return at::globalContext().hasCUDART();
#endif
}

const std::string& CudaNotLoaded() { return CudaNotLoadedText(); }

torch::Device UsableDevice(const std::string& name) {
  std::optional<torch::Device> device;
  try {
    device.emplace(name);
  } catch (const std::exception&) {
  }
  if (!device || !(device->is_cpu() || device->is_cuda())) {
    throw Error(ErrorKind::kUsage, "bad --device '" + name + "' (cpu, cuda or cuda:N)");
  }
  if (device->is_cuda()) {
    if (!CudaCompiled()) {
      throw Error(ErrorKind::kUnavailable, "this LibTorch was built without CUDA; build tsctl against a CUDA-enabled LibTorch");
    }
    if (!CudaNotLoaded().empty()) throw Error(ErrorKind::kUnavailable, "no CUDA device is visible: " + CudaNotLoaded());
    if (!torch::cuda::is_available()) throw Error(ErrorKind::kUnavailable, "no CUDA device is visible (this LibTorch has CUDA)");
    if (device->has_index() && device->index() >= static_cast<int>(torch::cuda::device_count())) {
      throw Error(ErrorKind::kUnavailable,
                  "no device " + name + ": " + std::to_string(torch::cuda::device_count()) + " visible");
    }
  }
  return *device;
}

c10::IValue ToDevice(const c10::IValue& value, const torch::Device& device) {
  if (value.isTensor()) return value.toTensor().to(device);
  if (value.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& v : value.toTupleRef().elements()) items.push_back(ToDevice(v, device));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (value.isList()) {
    c10::impl::GenericList list = value.toList();
    c10::impl::GenericList out(list.elementType());
    for (const auto& v : list) out.push_back(ToDevice(v, device));
    return out;
  }
  if (value.isGenericDict()) {
    c10::impl::GenericDict dict = value.toGenericDict();
    c10::impl::GenericDict out(dict.keyType(), dict.valueType());
    for (const auto& kv : dict) out.insert(kv.key(), ToDevice(kv.value(), device));
    return out;
  }
  return value;
}

void UseExactCuda() {
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
  at::globalContext().setAllowTF32CuDNN(false);
  at::globalContext().setAllowTF32CuBLAS(false);
}

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string QuantizedEngines() {
  std::string out;
  for (at::QEngine e : at::globalContext().supportedQEngines()) {
    if (e == at::QEngine::NoQEngine) continue;
    out += (out.empty() ? "" : ", ") + Lower(c10::toString(e));
  }
  return out;
}

void UseQuantizedEngine(const std::string& name) {
  if (name.empty()) return;
  // By name, not by enumerator: the engines differ between releases (X86
  // arrived in 2.0) and between builds (Debian's has no FBGEMM).
  for (at::QEngine e : at::globalContext().supportedQEngines()) {
    if (e != at::QEngine::NoQEngine && Lower(c10::toString(e)) == Lower(name)) {
      at::globalContext().setQEngine(e);
      return;
    }
  }
  throw Error(ErrorKind::kUsage, "--quantized-engine: this LibTorch has no engine '" + name + "' (it has: " + QuantizedEngines() + ")");
}

}  // namespace tsctl
