#include <dlfcn.h>

#include <string>

#include "tsctl/error.h"
#include "tsctl/python_backend.h"
#include "tsctl/torch_backend.h"

#include <unistd.h>

namespace tsctl {
namespace {

std::string PluginDir() {
  Dl_info info{};
  std::string dir = ".";
  if (dladdr(reinterpret_cast<void*>(&GetTorchBackend), &info) != 0 && info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos) dir = self.substr(0, slash);
  }
  return dir;
}

[[maybe_unused]] std::string PluginPath() {
  if (const char* env = std::getenv("TSCTL_TORCH_PLUGIN"); env && *env) return env;
  return PluginDir() + "/libtsctl_torch.so";
}

std::string PythonPluginPath() {
  if (const char* env = std::getenv("TSCTL_PYTHON_PLUGIN"); env && *env) return env;
  return PluginDir() + "/libtsctl_python.so";
}


// dlopens `path` and calls its factory `symbol`; on failure `failure` says why.
template <typename T>
const T* LoadPlugin(const std::string& path, const char* symbol, int flags, const std::string& what, std::string& failure) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | flags);
  if (!handle) {
    const char* err = dlerror();
    failure = "cannot load the " + what + " plugin: " + std::string(err ? err : path);
    return nullptr;
  }
  using Factory = const T* (*)();
  auto factory = reinterpret_cast<Factory>(dlsym(handle, symbol));
  if (!factory) {
    failure = "the " + what + " plugin " + path + " lacks " + symbol;
    return nullptr;
  }
  return factory();
}

// Set once GetTorchBackend has loaded the plugin.
const TorchBackend* loaded_torch_backend = nullptr;

}  // namespace

const TorchBackend& GetTorchBackend() {
#if TSCTL_WITH_TORCH
  static std::string failure;
  static const TorchBackend* backend =
      LoadPlugin<TorchBackend>(PluginPath(), "tsctl_torch_backend_v1", RTLD_LOCAL, "LibTorch", failure);
  if (!backend) throw Error(ErrorKind::kUnavailable, failure);
  loaded_torch_backend = backend;
  return *backend;
#else
  throw Error(ErrorKind::kUnavailable, "this tsctl was built without LibTorch (TSCTL_WITH_TORCH=OFF)");
#endif
}

const TorchBackend* LoadedTorchBackend() { return loaded_torch_backend; }

bool PythonBackendBuilt() { return ::access(PythonPluginPath().c_str(), R_OK) == 0; }

const PythonBackend& GetPythonBackend() {
  static std::string failure;
  static const PythonBackend* backend = [] () -> const PythonBackend* {
    if (!PythonBackendBuilt()) {
      failure = "this tsctl was built without Python support (no Python development files or pybind11 at build time)";
      return nullptr;
    }
    // RTLD_GLOBAL: Python's extension modules need libpython's symbols.
    return LoadPlugin<PythonBackend>(PythonPluginPath(), "tsctl_python_backend_v1", RTLD_GLOBAL, "Python", failure);
  }();
  if (!backend) throw Error(ErrorKind::kUnavailable, failure);
  return *backend;
}

}  // namespace tsctl
