#include <dlfcn.h>

#include <mutex>
#include <string>

#include "tsctl/error.h"
#include "tsctl/torch_backend.h"

namespace tsctl {
namespace {

std::string PluginPath() {
  if (const char* env = std::getenv("TSCTL_TORCH_PLUGIN"); env && *env) return env;
  Dl_info info{};
  std::string dir = ".";
  if (dladdr(reinterpret_cast<void*>(&GetTorchBackend), &info) != 0 && info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos) dir = self.substr(0, slash);
  }
  return dir + "/libtsctl_torch.so";
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

}  // namespace tsctl
