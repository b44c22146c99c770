// `tsctl bench`: latency, throughput, warm-up and per-operator profiles.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tsctl/inputs.h"
#include "tsctl/output.h"
#include "tsctl/progress_event.h"
#include "tsctl/tensor_desc.h"
#include "tsctl/pt2_run.h"
#include "tsctl/run_spec.h"

namespace tsctl {

inline constexpr int kBenchSchemaVersion = 1;

// Triton's PyTorch backend parameters and what they map to (docs/anchors.md).
struct ExecutionSettings {
  bool optimized_execution = true;  // torch::jit::setGraphExecutorOptimize
  bool inference_mode = true;       // c10::InferenceMode (else torch::NoGradGuard)
  std::optional<bool> jit_profiling;   // torch::jit::getProfilingMode(); unset: LibTorch's default
  std::optional<bool> jit_executor;    // torch::jit::getExecutorMode()
  std::optional<bool> tensor_fuser;    // torch::jit::setTensorExprFuserEnabled
  bool freeze = false;                 // torch::jit::freeze
  bool optimize_for_inference = false; // torch::jit::optimize_for_inference
  bool cache_cleaning = false;         // empty the CUDA caching allocator after each run

  std::string Describe() const;
};

// bench's flags: the run (RunSpec: method, inputs, device, limits; the
// child is killed after timeout_seconds, with --sweep each combination's)
// and how it is timed and profiled.
struct BenchOptions : RunSpec {
  BenchOptions() { timeout_seconds = 600; }
  std::string path;
  // What LibTorch loads: the archive tsctl checked, as its open descriptor
  // (/proc/self/fd/N, inherited by the child); set by tsctl. Empty: `path`.
  std::string load_path;
  // --allow-load-hooks: Bench and Sweep check the archive first, as
  // validate does; this lets an archive through whose only finding is ts.hooks.
  // This process's decision: not sent to the child.
  bool allow_load_hooks = false;
  std::string input_source;    // where the inputs came from, for the report
  // Warm-up: `warmup` calls when >= 0 (--warmup N), else calls until
  // `warmup_seconds` have passed (--warmup-time; at least one call).
  int warmup = -1;
  double warmup_seconds = 0.2;
  // Timed calls per instance: `iters` when > 0 (--iters N), else calls until
  // `duration_seconds` have passed (--duration; at least one call), as trtexec.
  int iters = 0;
  double duration_seconds = 3;
  int threads = 0;              // 0: LibTorch's default
  int interop_threads = 0;
  int instances = 1;
  bool share_weights = false;
  ExecutionSettings settings;
  std::vector<double> percentiles = {50, 90, 99};
  // Profiling.
  bool profile = false;
  std::string etdump_path;  // --etdump FILE (a .pte, with profile): the ETDump the runtime's tracer wrote
  bool profile_shapes = false;
  double profile_sample = 1.0;
  std::string trace_path;  // Chrome trace JSON
  bool log_api_usage = false;
  std::string model_id;    // tags operator callbacks through c10::DebugInfoGuard
  // Called now and then (at most ten times a second) from the timing thread:
  // kWarmup or kTiming with calls done of `total`, or tenths of a second
  // spent of `total` (`seconds`); before that, while inputs are inferred,
  // kInputs with the candidate tried (from 1).
  std::function<void(const ProgressEvent&)> progress;
  std::string save_outputs_path;  // --save-outputs: one more (untimed) run's outputs, torch.save format
  // A .pt2 AOTInductor package (kind kAoti): timed through
  // AOTIModelPackageLoader::run; `settings` other than inference mode do not apply.
  Pt2RunSpec pt2;
};

// One output leaf of a benchmarked call.
struct BenchOutput {
  std::string name;  // "output", "output[1]", "output['scores']"
  std::string desc;  // "Float[1, 10]" for a tensor, "int 7", ...
  std::optional<TensorDesc> tensor;  // a tensor: its dtype, shape and device
};

struct OpStat {
  std::string name;
  std::string shapes;  // with profile_shapes: input shapes, e.g. "[1, 3, 224, 224], [64, 3, 7, 7]"
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  uint64_t self_ns = 0;
};

struct BenchResult {
  std::string path;
  std::string saved_outputs;  // --save-outputs: where the outputs were written (set by the parent)
  // How the phases were bounded, copied from BenchOptions by the parent: a
  // count (warmup >= 0, iters > 0) or else a time in seconds.
  int warmup_count = -1;
  double warmup_seconds = 0;
  int iters_count = 0;
  double duration_seconds = 0;
  std::string method;
  std::string device;
  std::vector<std::string> inputs;
  std::vector<std::optional<TensorDesc>> input_tensors;  // beside each of `inputs`: the tensor it made, if one
  std::string input_source;
  std::string settings;
  std::string libtorch_version;
  // The runtime that ran it where it is not LibTorch: "ExecuTorch 1.5.1" (a .pte).
  std::string runtime;
  int threads = 0;
  int interop_threads = 0;
  int instances = 1;
  uint64_t load_ns = 0;
  uint64_t first_ns = 0;                 // the first call
  std::vector<uint64_t> warmup_ns;       // every warm-up call, the first included
  int settled_after = -1;                // warm-up calls until timings settled; -1: never
  std::vector<uint64_t> latencies_ns;    // timed calls, in order
  uint64_t wall_ns = 0;                  // the timed phase, all instances
  uint64_t peak_rss_bytes = 0;
  int64_t cuda_peak_bytes = -1;          // -1: not measured
  std::vector<OpStat> ops;               // with profile
  uint64_t profiled_ns = 0;              // sum of top-level operator time
  double profile_sample = 1.0;
  std::vector<std::pair<std::string, uint64_t>> api_usage;  // event, count
  std::vector<std::string> warnings;
  bool device_time = false;              // per-op device time measured
  bool aoti = false;                     // an AOTInductor package (Triton's torch_aoti)
  // The last timed call's outputs (the untimed --save-outputs call's when
  // there is one), leaf by leaf ("output", "output[1]"; desc "Float[1, 10]"
  // for a tensor).
  std::vector<BenchOutput> outputs;
};

struct Stats {
  uint64_t min = 0, max = 0;
  double mean = 0, stddev = 0, median = 0;
  std::vector<std::pair<double, double>> percentiles;  // (p, value)
  double throughput = 0;  // calls per second over the timed phase
};
Stats ComputeStats(const BenchResult& r, const std::vector<double>& percentiles);
// The first warm-up call from which the calls (and every rolling median of 5)
// stay within 15% of the timed median; -1 if they never do.
int SettledAfter(const std::vector<uint64_t>& warmup_ns, double timed_median);
// How far the median of the first tenth (at least 5) of the timed calls is
// from the timed median, as a fraction; -1 with under 10 timed calls. With
// enough calls, BenchWarnings' warm-up advice follows this, not SettledAfter.
double TimedStartOff(const std::vector<uint64_t>& latencies_ns, double timed_median);
// trtexec-style advice: unstable timings, warm-up not settled, ...
std::vector<std::string> BenchWarnings(const BenchResult& r, const Stats& s);

// JSON text (raw nanoseconds, schema_version), one line without a newline.
std::string RenderJson(const BenchResult& r, const std::vector<double>& percentiles);
void RenderText(const BenchResult& r, const std::vector<double>& percentiles, std::ostream& out);
// bench --report: one self-contained offline HTML page (the frame of tsctl
// report's pages, tsctl/report.h) with sections summary (the run, its
// warnings), latency (percentiles, a histogram of the timed calls, every
// call's time in order, warm-up first) and operators (with --profile: self
// time as sorted bars, and a table). Strings from the archive are escaped.
std::string RenderHtml(const BenchResult& r, const std::vector<double>& percentiles);

// --shapes NAME:MIN,OPT,MAX (trtexec's --minShapes/--optShapes/--maxShapes):
// the tensor argument NAME at three specs ("x:1x3x224x224,8x3x224x224,32x3x224x224";
// a dtype or fill given on the first applies to all three).
struct ShapeRange {
  std::string name;
  std::vector<InputSpec> specs;  // min, opt, max
};
// Throws tsctl::Error (kUsage) naming what is wrong.
ShapeRange ParseShapeRange(const std::string& text);

// One benchmark per point (min, opt, max), each in its own child, the
// ranges' arguments at that point's spec beside the other arguments given.
struct ShapePoint {
  std::string point;          // "min", "opt", "max"
  std::vector<ArgSpec> args;  // the ranges' arguments at this point
  bool ok = false;
  std::string error;          // why this point failed (the others still run)
  BenchResult result;
};
// Throws tsctl::Error (kUsage) for options --shapes cannot take (--load-inputs,
// --data-loader-script, --sweep, --save-outputs, a .pt2) and for ranges that
// name one argument twice.
std::vector<ShapePoint> BenchShapes(BenchOptions options, const std::vector<ShapeRange>& ranges,
                                    const std::function<void(size_t done, size_t total)>& progress = {});
// The table shows each point's median and p90; JSON has every percentile asked for.
void RenderShapes(const std::vector<ShapePoint>& points, std::ostream& out);
std::string RenderShapesJson(const std::vector<ShapePoint>& points, const std::vector<double>& percentiles);
// bench's documents in `format` (text, json): one run, --shapes, --sweep.
std::string Render(const BenchResult& result, const std::vector<double>& percentiles, OutputFormat format);
std::string Render(const std::vector<ShapePoint>& points, const std::vector<double>& percentiles, OutputFormat format);

// --sweep: one row per settings combination.
struct SweepRow {
  ExecutionSettings settings;
  bool ok = false;
  std::string error;
  double mean_ns = 0, median_ns = 0, p90_ns = 0;
  double stddev_ns = 0;     // of the timed calls
  uint64_t iterations = 0;  // timed calls
  uint64_t first_ns = 0;
  // An AOTInductor package's row: the TorchScript executor's settings do not
  // apply; it varies inference mode and the intra-op threads (0: LibTorch's
  // default, the number of cores).
  bool aoti = false;
  int threads = 0;
  BenchResult run;  // the row's benchmark, when ok (inputs, outputs, device)
};
std::vector<ExecutionSettings> SweepSettings(bool cuda);
// An AOTInductor package's rows: inference mode on/off times the intra-op
// threads LibTorch's default, 1 and half the cores (those that differ).
std::vector<SweepRow> AotiSweepRows(int cores);
// Whether a row is what Triton runs when config.pbtxt sets no parameters.
bool IsDefaultSweepRow(const SweepRow& row);
// LibTorch's defaults as a sweep row's settings (optimized execution, inference
// mode, profiling executor, tensor fuser: all on), which Triton uses when
// config.pbtxt sets no parameters.
bool IsDefaultSweepSettings(const ExecutionSettings& s);
// Which settings --sweep recommends. The fastest row (lowest mean) is
// recommended only when it beats the defaults beyond the measured noise: its
// mean is lower by more than 1% and by more than the two 95% confidence
// half-widths of the means (1.96 stddev / sqrt(n)) added together. Otherwise
// the defaults are kept.
struct SweepChoice {
  const SweepRow* fastest = nullptr;   // null when every row failed
  const SweepRow* defaults = nullptr;  // null when the defaults' row failed or is missing
  const SweepRow* recommended = nullptr;  // fastest, defaults, or null when all failed
  std::string reason;                  // one sentence: how it was decided
};
SweepChoice ChooseSweep(const std::vector<SweepRow>& rows);
void RenderSweep(const std::vector<SweepRow>& rows, std::ostream& out);
// bench --sweep --report: the page of a sweep, sections summary and sweep
// (every combination's figures, the recommended one marked, means as bars).
std::string RenderSweepHtml(const std::vector<SweepRow>& rows);
std::string RenderSweepJson(const std::vector<SweepRow>& rows);
std::string Render(const std::vector<SweepRow>& rows, OutputFormat format);
// The `parameters { ... }` block of Triton's config.pbtxt for these settings.
std::string TritonParameters(const ExecutionSettings& s);
// The parameters block for a sweep row (TorchScript's settings, or an
// AOTInductor row's INFERENCE_MODE and INTRA_OP_THREAD_COUNT); "" for the
// defaults.
std::string TritonParameters(const SweepRow& row);

// A whole Triton model configuration (config.pbtxt) for what `run`
// benchmarked: platform pytorch_libtorch, or torch_aoti for an AOTInductor
// package; max_batch_size 0 with each input and output at the shape and
// dtype it ran with, named as Triton's PyTorch backend names them
// (INPUT__i/OUTPUT__i; ARGS[i] and RESULT, RESULT[i] for torch_aoti); one
// instance group on run's device with run.instances; then `parameters`
// (TritonParameters' text). An output that is not a tensor, or of a dtype
// Triton has no type for, is left out with a comment saying so.
std::string TritonConfig(const BenchResult& run, const std::string& parameters);

}  // namespace tsctl
