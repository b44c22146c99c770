// The plugin's entry point: the one object that implements TorchBackend.
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#include "graph.h"
#include "torch_util.h"
#include "tsctl/torch_backend.h"

namespace tsctl {
namespace {

class Backend : public TorchBackend {
 public:
  BuildInfo Info() const override {
    BuildInfo info;
    info.libtorch_version = TORCH_VERSION;
    info.cuda_compiled = torch::cuda::is_available() || at::hasCUDA();
    info.cuda_available = torch::cuda::is_available();
    info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
    info.cxx_standard = "C++" + std::to_string(__cplusplus / 100 % 100);
    return info;
  }

  std::string Graph(const GraphOptions& options) const override { return RenderGraph(options); }

  std::string CompiledCode(const std::string& path, const std::string& method) const override {
    return RenderCompiledCode(path, method);
  }

  std::vector<std::string> Methods(const std::string& path) const override {
    std::vector<std::string> names;
    for (const auto& m : LoadModule(path).get_methods()) names.push_back(m.name());
    return names;
  }
};

}  // namespace
}  // namespace tsctl

extern "C" __attribute__((visibility("default"))) const tsctl::TorchBackend* tsctl_torch_backend_v1() {
  static const tsctl::Backend backend;
  return &backend;
}
