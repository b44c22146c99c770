// Commands that need LibTorch. They live in a separate plugin library
// (libtsctl_torch.so) that is loaded on first use, so that commands that only
// read archives (inspect, code, stamp) never pay LibTorch's start-up.
#pragma once

#include <string>
#include <vector>

#include "tsctl/bench.h"
#include "tsctl/inputs.h"
#include "tsctl/model_check.h"

namespace tsctl {

struct BuildInfo {
  std::string libtorch_version;  // e.g. "1.13.0" as LibTorch's headers say
  bool cuda_compiled = false;    // this LibTorch was built with CUDA
  bool cuda_available = false;   // and a device is visible now
  int cuda_devices = 0;
  std::string cuda_runtime;      // e.g. "13.0" when cuda_compiled
  std::string library_path;      // the LibTorch library this process loaded
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
  // Arguments of any type (--arg), typed by the method's schema; used with
  // `inputs` (tensors, first positions) when given.
  std::vector<ArgSpec> args;
  std::string input_source;        // where args/inputs came from, for the report
  std::string load_inputs_path;    // --load-inputs: torch.save of the argument tuple, .npy, .npz
  bool infer_inputs = true;        // no inputs anywhere: infer candidates and try them
  double infer_budget_seconds = 60;  // stop trying candidates after this long
  std::string save_outputs_path;   // write this run's outputs here (torch.save format)
  std::string progress_path;       // the child writes "loaded" here once the archive loaded
};

// tsctl trace / tsctl script.
struct TraceOptions {
  std::string path;  // the archive whose method is traced
  std::string method = "forward";
  std::vector<InputSpec> inputs;
  std::vector<std::vector<InputSpec>> check_inputs;  // each: one input set
  bool freeze = false;
  double rtol = 1e-5;
  double atol = 1e-6;
  std::string output;
  std::string load_inputs_path;  // example inputs from a file instead of `inputs`
};

struct ScriptOptions {
  std::string source;       // TorchScript source: methods using torch.*
  std::string source_name;  // for messages
  std::string class_name = "Net";
  std::vector<InputSpec> inputs;  // optional: run once and record as extra/tsctl_inputs.json
  bool freeze = false;
  std::string output;
};

struct CheckReport {
  std::string inputs;  // "2x3x64x64:float32, 4:int64"
  bool matched = false;
  double max_abs = 0;
  std::string error;
};

struct MakeResult {
  std::string output;
  uint64_t bytes = 0;
  std::vector<std::string> methods;
  std::vector<std::string> inputs;  // recorded in extra/tsctl_inputs.json
  std::vector<CheckReport> checks;
  bool diverged = false;  // a check input gave different outputs: nothing written
  std::vector<std::string> warnings;  // e.g. Python's TracerWarnings
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
  // `tsctl validate` needs. Failures of the model are data in the result;
  // throws tsctl::Error (kUsage) for arguments that do not fit the method.
  virtual ModelCheckResult CheckModel(const ModelCheckOptions& options) const = 0;
  // Loads and times a method (tsctl bench). Throws tsctl::Error: kTorch if
  // loading or running fails, kUnavailable for a device this build or
  // machine lacks, kUsage for bad options.
  virtual BenchResult Bench(const BenchOptions& options) const = 0;
  // Traces a method of an archive with LibTorch's tracer into a new archive
  // (parameters stay module attributes unless freeze). Writes atomically;
  // writes nothing if a check input diverges (result.diverged).
  virtual MakeResult Trace(const TraceOptions& options) const = 0;
  // Compiles TorchScript source into a module and writes it atomically.
  virtual MakeResult ScriptSource(const ScriptOptions& options) const = 0;
  // Names of the methods of the archive's top-level module.
  virtual std::vector<std::string> Methods(const std::string& path) const = 0;
};

// Loads the plugin on first call. Throws tsctl::Error (kUnavailable) naming
// the library and the loader's message if it cannot be loaded.
const TorchBackend& GetTorchBackend();

}  // namespace tsctl
