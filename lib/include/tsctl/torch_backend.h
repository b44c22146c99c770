// Commands that need LibTorch. They live in a separate plugin library
// (libtsctl_torch.so) that is loaded on first use, so that commands that only
// read archives (inspect, code, stamp) never pay LibTorch's start-up.
#pragma once

#include <string>
#include <vector>

#include "tsctl/bench.h"
#include "tsctl/inputs.h"

namespace tsctl {

struct BuildInfo {
  std::string libtorch_version;  // e.g. "1.13.0" as LibTorch's headers say
  bool cuda_compiled = false;    // this LibTorch was built with CUDA
  bool cuda_available = false;   // and a device is visible now
  int cuda_devices = 0;
  std::string cxx_standard;      // what tsctl was compiled as
};

struct GraphOptions {
  std::string path;
  std::string method = "forward";
  bool inlined = false;
  bool frozen = false;  // torch::jit::freeze + optimize_for_inference
  enum class Format { kText, kDot } format = Format::kText;
};

struct ModelCheckOptions {
  std::string path;
  std::string method = "forward";
  std::vector<InputSpec> inputs;  // empty: take them from the reference, else do not run
  bool run = true;
  bool check_determinism = true;
  // Reference outputs: a file (torch::pickle_save / torch.save of a dict
  // {"inputs": (tensors,), "outputs": value}, or of the outputs alone), or the
  // archive's extra/tsctl_reference.pt when `reference_from_archive`.
  std::string reference_path;
  bool reference_from_archive = false;
  std::vector<double> rtol = {1e-5};  // one value, or one per output
  std::vector<double> atol = {1e-8};
  // Write {"inputs", "outputs"} of this run here (for --record-reference).
  std::string record_reference_path;
};

class TorchBackend {
 public:
  virtual ~TorchBackend() = default;
  virtual BuildInfo Info() const = 0;
  // The IR of one method of the archive at `options.path`, as Python prints
  // `m.graph` (or `inlined_graph`), or as Graphviz DOT. Throws tsctl::Error
  // (kTorch) with LibTorch's cause if loading fails, (kUsage) if the method
  // does not exist.
  virtual std::string Graph(const GraphOptions& options) const = 0;
  // What Python's `m.code` (or `m.<method>.code`) prints for the archive.
  virtual std::string CompiledCode(const std::string& path, const std::string& method) const = 0;
  // Loads, finds the method, lists operators, runs and compares, as
  // `tsctl validate` needs; returns a JSON document (see validate.cc for the
  // fields). Failures of the model are data in the result, not exceptions.
  virtual std::string CheckModel(const ModelCheckOptions& options) const = 0;
  // Loads and times a method (tsctl bench). Throws tsctl::Error: kTorch if
  // loading or running fails, kUnavailable for a device this build or
  // machine lacks, kUsage for bad options.
  virtual BenchResult Bench(const BenchOptions& options) const = 0;
  // Names of the methods of the archive's top-level module.
  virtual std::vector<std::string> Methods(const std::string& path) const = 0;
};

// Loads the plugin on first call. Throws tsctl::Error (kUnavailable) naming
// the library and the loader's message if it cannot be loaded.
const TorchBackend& GetTorchBackend();

}  // namespace tsctl
