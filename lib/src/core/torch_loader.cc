#include <dlfcn.h>

#include <mutex>
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

std::string PluginPath() {
  if (const char* env = std::getenv("TSCTL_TORCH_PLUGIN"); env && *env) return env;
  return PluginDir() + "/libtsctl_torch.so";
}

std::string PythonPluginPath() {
  if (const char* env = std::getenv("TSCTL_PYTHON_PLUGIN"); env && *env) return env;
  return PluginDir() + "/libtsctl_python.so";
}

}  // namespace

const TorchBackend& GetTorchBackend() {
  static std::once_flag once;
  static const TorchBackend* backend = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::string path = PluginPath();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* err = dlerror();
      failure = "cannot load the LibTorch plugin: " + std::string(err ? err : path);
      return;
    }
    using Factory = const TorchBackend* (*)();
    auto factory = reinterpret_cast<Factory>(dlsym(handle, "tsctl_torch_backend_v1"));
    if (!factory) {
      failure = "the LibTorch plugin " + path + " lacks tsctl_torch_backend_v1";
      return;
    }
    backend = factory();
  });
  if (!backend) throw Error(ErrorKind::kUnavailable, failure);
  return *backend;
}

bool PythonBackendBuilt() { return ::access(PythonPluginPath().c_str(), R_OK) == 0; }

const PythonBackend& GetPythonBackend() {
  static std::once_flag once;
  static const PythonBackend* backend = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::string path = PythonPluginPath();
    if (::access(path.c_str(), R_OK) != 0) {
      failure = "this tsctl was built without Python support (no Python development files or pybind11 at build time)";
      return;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);  // GLOBAL: Python extension modules need libpython's symbols
    if (!handle) {
      const char* err = dlerror();
      failure = "cannot load the Python plugin: " + std::string(err ? err : path);
      return;
    }
    using Factory = const PythonBackend* (*)();
    auto factory = reinterpret_cast<Factory>(dlsym(handle, "tsctl_python_backend_v1"));
    if (!factory) {
      failure = "the Python plugin " + path + " lacks tsctl_python_backend_v1";
      return;
    }
    backend = factory();
  });
  if (!backend) throw Error(ErrorKind::kUnavailable, failure);
  return *backend;
}

}  // namespace tsctl
