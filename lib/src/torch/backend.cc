// The plugin's entry point: the one object that implements TorchBackend.
#include <ATen/Parallel.h>
#include <caffe2/serialize/versions.h>
#include <dlfcn.h>
#include <torch/cuda.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/script.h>
#include <torch/version.h>

#include <cstdio>
#include <cstdlib>

#include "backend.h"
#include "registry.h"
#include "tsctl/escape.h"
#include "bench_runner.h"
#include "check_model.h"
#include "graph.h"
#include "make_archive.h"
#include "producer_hook.h"
#include "pt2_package.h"
#include "pt2_runner.h"
#include "torch_util.h"
#include "view_guard.h"
#include "plugin_abi.h"

// Exported by libtorch_cpu in 1.13 and 2.x, declared in
// torch/csrc/jit/operator_upgraders/upgraders_entry.h, a header Debian's
// libtorch-dev does not ship.
namespace torch::jit {
TORCH_API void populate_upgraders_graph_map();
}  // namespace torch::jit

namespace tsctl {
namespace {

class Backend final : public TorchBackend {
 public:
  void PrepareForFork() const override {
    // Measured on the corpus (scripts/bench_fork_server.py): these two tables
    // were over half of each child's time; Python builds them once per
    // process too.
    try {
      torch::jit::getAllOperators();
      torch::jit::populate_upgraders_graph_map();
    } catch (const std::exception&) {
    }
  }
  void LimitThreads(int intra_op_threads) const override {
    if (intra_op_threads > 0) at::set_num_threads(intra_op_threads);
  }
  void PrepareForPackages() const override {
#ifdef TSCTL_HAVE_AOTI
    ExposeLibTorchSymbols();
#endif
  }
  BuildInfo Info() const override {
    BuildInfo info = StaticInfo();
    info.cuda_available = torch::cuda::is_available();
    info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
    return info;
  }

  std::string Registry() const override { return RegistryText(); }

  BuildInfo StaticInfo() const override {
    BuildInfo info;
    info.libtorch_version = TORCH_VERSION;
    // The build has CUDA, whether or not a device is visible (or, where no
    // driver is, its libraries were loaded: then no runtime version).
    info.cuda_compiled = CudaCompiled();
    if (at::globalContext().hasCUDART()) {
      long v = at::globalContext().versionCUDART();  // e.g. 13000; throws without CUDART
      info.cuda_runtime = std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    }
    info.cuda_note = CudaNotLoaded();
    info.library_path = LibTorchCpuPath();
    info.cxx_standard = "C++" + std::to_string(__cplusplus / 100 % 100);
    info.min_file_format = static_cast<int64_t>(caffe2::serialize::kMinSupportedFileFormatVersion);
    info.max_file_format = static_cast<int64_t>(caffe2::serialize::kMaxSupportedFileFormatVersion);
    info.pt2 = DescribePt2Support();
    return info;
  }

  // Every request that loads an archive arms the view guard first: a
  // __setstate__ runs while the archive loads (view_guard.h).
  std::string Graph(const GraphOptions& options) const override {
    ArmViewGuard();
    return RenderGraph(options);
  }

  std::string CompiledCode(const std::string& path, const std::string& method) const override {
    ArmViewGuard();
    return RenderCompiledCode(path, method);
  }

  MakeResult Trace(const TraceOptions& options) const override {
    ArmViewGuard();
    return TraceArchive(options);
  }
  MakeResult ScriptSource(const ScriptOptions& options) const override { return ScriptFromSource(options); }

  BenchResult Bench(const BenchOptions& options) const override {
    if (options.pt2.kind == Pt2RunSpec::Kind::kNone) ArmViewGuard();
    return options.pt2.kind == Pt2RunSpec::Kind::kNone ? RunBench(options) : BenchPt2(options);
  }

  ModelCheckResult CheckModel(const ModelCheckOptions& options) const override {
    if (options.pt2.kind == Pt2RunSpec::Kind::kNone) ArmViewGuard();
    return options.pt2.kind == Pt2RunSpec::Kind::kNone ? tsctl::CheckModel(options) : CheckPt2Model(options);
  }
};

}  // namespace

namespace {

// LibTorch's warnings (TORCH_WARN: deprecations such as 2.x's quantized
// tensor creation) would reach stderr raw, timestamped, on every load. They
// are shown with -v (the CLI sets TSCTL_VERBOSE), escaped, one line each, on
// this process's stderr: the pipe tsctl reads (child_output.h), whose lines
// it shows after a prefix of its own. (A pool thread keeps LibTorch's own
// handler, which writes to the same pipe.)
void ShowWarning(const std::string& msg) {
  if (!std::getenv("TSCTL_VERBOSE")) return;
  std::fprintf(stderr, "LibTorch warning: %s\n", EscapeText(msg).c_str());
}

class QuietWarnings : public c10::WarningHandler {
 public:
#if TORCH_VERSION_MAJOR >= 2
  void process(const c10::Warning& warning) override { ShowWarning(warning.msg()); }
#else
  void process(const c10::SourceLocation&, const std::string& msg, const bool) override { ShowWarning(msg); }
#endif
};

}  // namespace

void InstallWarningHandler() {
  static QuietWarnings handler;
#if TORCH_VERSION_MAJOR >= 2
  c10::WarningUtils::set_warning_handler(&handler);
#else
  c10::Warning::set_warning_handler(&handler);
#endif
}


const TorchBackend* CreateTorchBackend() {
  static const TorchBackend* backend = [] {
    LoadCudaWhereDriver();
    InstallWarningHandler();
    InstallProducerHook();
    return new Backend();
  }();
  return backend;
}

}  // namespace tsctl

