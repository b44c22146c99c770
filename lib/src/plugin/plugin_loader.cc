// Finds and loads the plugins next to libtsctl, checking their ABI version.
#include <dlfcn.h>
#include <unistd.h>

#include <string>

#include "plugin_abi.h"
#include "pte_child.h"
#include "tsctl/error.h"

namespace tsctl {
namespace {

std::string PluginDir() {
  Dl_info info{};
  std::string dir = ".";
  if (dladdr(reinterpret_cast<void*>(&LoadTorchPlugin), &info) != 0 && info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos) dir = self.substr(0, slash);
  }
  return dir;
}

std::string PluginPath(const char* env_name, const char* file) {
  if (const char* env = std::getenv(env_name); env && *env) return env;
  return PluginDir() + "/" + file;
}

// dlopens `path`, checks `abi_symbol` returns `abi`, and calls `factory`; on
// failure `failure` says why in one line.
template <typename T>
const T* LoadPlugin(const std::string& path, const char* abi_symbol, int abi, const char* factory_symbol, int flags,
                    const std::string& what, std::string& failure) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | flags);
  if (!handle) {
    const char* err = dlerror();
    failure = "cannot load the " + what + " plugin: " + std::string(err ? err : path);
    return nullptr;
  }
  auto abi_of = reinterpret_cast<int (*)()>(dlsym(handle, abi_symbol));
  if (!abi_of) {
    failure = "the " + what + " plugin " + path + " predates ABI versioning (no " + abi_symbol +
              "): it belongs to another tsctl; reinstall tsctl so the two match";
    return nullptr;
  }
  if (int have = abi_of(); have != abi) {
    failure = "the " + what + " plugin " + path + " has ABI version " + std::to_string(have) + ", this tsctl needs " +
              std::to_string(abi) + ": it belongs to another tsctl; reinstall tsctl so the two match";
    return nullptr;
  }
  auto factory = reinterpret_cast<const T* (*)()>(dlsym(handle, factory_symbol));
  if (!factory) {
    failure = "the " + what + " plugin " + path + " lacks " + factory_symbol;
    return nullptr;
  }
  return factory();
}

// Set once LoadTorchPlugin has loaded the plugin.
const TorchBackend* loaded_torch_backend = nullptr;
// Set by ForbidLibTorch: the command that declared it needs no LibTorch.
std::string forbidden_by;

}  // namespace

void ForbidLibTorch(const std::string& command) { forbidden_by = command; }

std::string TorchServerPath() { return PluginPath("TSCTL_TORCH_SERVER", "tsctl-torch-server"); }

std::string PteRunnerPath() { return PluginPath("TSCTL_PTE_RUNNER", "tsctl-pte-runner"); }

void RequireLibTorchAllowed() {
  if (!forbidden_by.empty()) {
    throw Error(ErrorKind::kUnavailable, "internal error: tsctl " + forbidden_by +
                                             " is declared not to load LibTorch, yet tried to (please report it)");
  }
#if !TSCTL_WITH_TORCH
  throw Error(ErrorKind::kUnavailable, "this tsctl was built without LibTorch (TSCTL_WITH_TORCH=OFF)");
#endif
}

const TorchBackend& LoadTorchPlugin() {
  RequireLibTorchAllowed();
#if TSCTL_WITH_TORCH
  static std::string failure;
  static const TorchBackend* backend =
      LoadPlugin<TorchBackend>(PluginPath("TSCTL_TORCH_PLUGIN", "libtsctl_torch.so"), "tsctl_torch_plugin_abi",
                               kTorchPluginAbi, "tsctl_torch_plugin", RTLD_LOCAL, "LibTorch", failure);
  if (!backend) throw Error(ErrorKind::kUnavailable, failure);
  loaded_torch_backend = backend;
  return *backend;
#else
  throw Error(ErrorKind::kUnavailable, "this tsctl was built without LibTorch (TSCTL_WITH_TORCH=OFF)");
#endif
}

const TorchBackend* LoadedTorchBackend() { return loaded_torch_backend; }

bool PythonPluginBuilt() {
  return ::access(PluginPath("TSCTL_PYTHON_PLUGIN", "libtsctl_python.so").c_str(), R_OK) == 0;
}

const PythonBackend& LoadPythonPlugin() {
  static std::string failure;
  static const PythonBackend* backend = []() -> const PythonBackend* {
    if (!PythonPluginBuilt()) {
      failure = "this tsctl was built without Python support (no Python development files or pybind11 at build time)";
      return nullptr;
    }
    // RTLD_GLOBAL: Python's extension modules need libpython's symbols.
    return LoadPlugin<PythonBackend>(PluginPath("TSCTL_PYTHON_PLUGIN", "libtsctl_python.so"), "tsctl_python_plugin_abi",
                                     kPythonPluginAbi, "tsctl_python_plugin", RTLD_GLOBAL, "Python", failure);
  }();
  if (!backend) throw Error(ErrorKind::kUnavailable, failure);
  return *backend;
}

}  // namespace tsctl
