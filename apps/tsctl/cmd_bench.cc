// tsctl bench ARCHIVE: latency, throughput, warm-up and per-operator profiles.
#include <iostream>
#include <sstream>

#include "cli.h"
#include "tsctl/format.h"
#include "progress.h"
#include "run_flags.h"
#include "tsctl/atomic_file.h"
#include "tsctl/escape.h"
#include "tsctl/bench.h"
#include "tsctl/torch_backend.h"

namespace tsctl::cli {
namespace {

// --triton-config FILE, written whole or not at all; text reports say where.
void WriteTritonConfig(const std::string& path, const std::string& config, bool json) {
  WriteFileAtomically(path, config);
  if (!json) std::cout << "Triton config.pbtxt written to " << EscapeText(path) << '\n';
}

struct BenchFlags {
  BenchOptions o;
  RunFlags run;
  std::string triton_config;  // --triton-config FILE
  std::string report;         // --report FILE.html
  std::string optimized = "on", inference = "on", profiling, executor, fuser;
  std::string percentiles = "50,90,99";
  OutputFormat format = OutputFormat::kText;
  bool sweep = false;
  std::vector<std::string> shapes;
  CLI::Option* duration = nullptr;
  CLI::Option* iters = nullptr;
};

// --sweep's default: each of its 16 combinations times calls for half a
// second (trtexec's 3 s each would take close to a minute).
constexpr double kSweepDurationSeconds = 0.5;

std::optional<bool> OnOff(const std::string& v) {
  if (v.empty()) return std::nullopt;
  return v == "on";
}

// BenchOptions::progress as a line: "timing 1.2 of 3 s", "warm-up 20 of 50 calls".
void ShowPhase(ProgressLine& line, const ProgressEvent& e) {
  char buf[96];
  const char* phase = e.kind == ProgressEvent::Kind::kWarmup ? "warm-up" : "timing";
  if (e.kind == ProgressEvent::Kind::kInputs) {
    std::snprintf(buf, sizeof buf, "trying inferred inputs: candidate %lld", static_cast<long long>(e.done));
  } else if (e.kind != ProgressEvent::Kind::kWarmup && e.kind != ProgressEvent::Kind::kTiming) {
    return;
  } else if (e.seconds && e.done > e.total) {  // a call longer than the budget: it ends with that call
    std::snprintf(buf, sizeof buf, "%s %.1f s (past its %g s: finishing the call)", phase, e.done / 10.0, e.total / 10.0);
  } else if (e.seconds) {
    std::snprintf(buf, sizeof buf, "%s %.1f of %g s", phase, e.done / 10.0, e.total / 10.0);
  } else {
    std::snprintf(buf, sizeof buf, "%s %lld of %lld calls", phase, static_cast<long long>(e.done), static_cast<long long>(e.total));
  }
  line.Show(buf);
}

int RunBench(BenchFlags& f, const GlobalOptions& global) {
  BenchOptions& o = f.o;
  return Guarded("bench", o.path, global, [&]() -> int {
    ApplyRunFlags(f.run, o);
    std::vector<double> percentiles = ParseNumberList(f.percentiles, "--percentiles", 0, 100, "a number from 0 to 100");
    o.percentiles = percentiles;
    o.settings.optimized_execution = f.optimized == "on";
    o.settings.inference_mode = f.inference == "on";
    o.settings.jit_profiling = OnOff(f.profiling);
    o.settings.jit_executor = OnOff(f.executor);
    o.settings.tensor_fuser = OnOff(f.fuser);
    if (o.profile_sample <= 0 || o.profile_sample > 1) throw Error(ErrorKind::kUsage, "--profile-sample must be in (0, 1]");
    if (o.profile_shapes || o.profile_sample < 1 || !o.etdump_path.empty()) o.profile = true;
    if (o.instances < 1) throw Error(ErrorKind::kUsage, "--instances must be at least 1");

    const bool json = f.format == OutputFormat::kJson;
    ProgressLine line("bench", StderrIsTerminal() && !json);
    // A format with a runner of its own (ExecuTorch's): one benchmark.
    if (const Format* own = FormatOfFile(o.path); own && own->bench) {
      if (!f.shapes.empty() || f.sweep || !f.triton_config.empty()) {
        throw Error(ErrorKind::kUsage, "--shapes, --sweep and --triton-config apply to TorchScript archives and .pt2");
      }
      if (line.enabled()) line.Show("loading and timing " + EscapeText(o.path));
      BenchResult r = own->bench(o);
      line.Clear();
      std::cout << Render(r, percentiles, f.format);
      if (!f.report.empty()) WriteFileAtomically(f.report, RenderHtml(r, percentiles));
      return kExitOk;
    }
    if (!f.shapes.empty()) {
      if (f.sweep) throw Error(ErrorKind::kUsage, "--shapes cannot be combined with --sweep");
      if (!f.triton_config.empty()) throw Error(ErrorKind::kUsage, "--triton-config applies to one benchmark or --sweep, not --shapes");
      if (!f.report.empty()) throw Error(ErrorKind::kUsage, "--report applies to one benchmark or --sweep, not --shapes");
      std::vector<ShapeRange> ranges;
      for (const std::string& s : f.shapes) ranges.push_back(ParseShapeRange(s));
      auto points = BenchShapes(o, ranges, [&](size_t done, size_t total) { line.Steps("shapes: timed", done, total); });
      line.Clear();
      std::cout << Render(points, percentiles, f.format);
      bool any = false;
      for (const auto& p : points) any |= p.ok;
      if (!any) throw Error(ErrorKind::kTorch, "every shape failed: " + points.front().error);
      return kExitOk;
    }
    if (f.sweep) {
      if (f.duration->count() == 0 && f.iters->count() == 0) o.duration_seconds = kSweepDurationSeconds;
      auto rows = Sweep(o, o.timeout_seconds, [&](size_t done, size_t total) { line.Steps("sweep: timed", done, total); });
      line.Clear();
      std::cout << Render(rows, f.format);
      bool any = false;
      for (const auto& r : rows) any |= r.ok;
      if (!any) throw Error(ErrorKind::kTorch, "every settings combination failed: " + rows.front().error);
      if (!f.report.empty()) WriteFileAtomically(f.report, RenderSweepHtml(rows));
      if (!f.triton_config.empty()) {
        const SweepRow& chosen = *ChooseSweep(rows).recommended;
        WriteTritonConfig(f.triton_config, TritonConfig(chosen.run, TritonParameters(chosen)), json);
      }
      return kExitOk;
    }
    if (line.enabled()) {
      line.Show("loading " + EscapeText(o.path));
      o.progress = [&line](const ProgressEvent& e) { ShowPhase(line, e); };
    }
    BenchResult r = Bench(o);
    line.Clear();
    std::cout << Render(r, percentiles, f.format);
    if (!f.report.empty()) WriteFileAtomically(f.report, RenderHtml(r, percentiles));
    if (!f.triton_config.empty()) {
      SweepRow ran;
      ran.settings = o.settings;
      ran.aoti = r.aoti;
      ran.threads = r.aoti ? o.threads : 0;
      WriteTritonConfig(f.triton_config, TritonConfig(r, TritonParameters(ran)), json);
    }
    return kExitOk;
  });
}

}  // namespace

RunFn BindBench(CLI::App* sub, const GlobalOptions& global) {
  auto f = std::make_shared<BenchFlags>();
  auto on_off = CLI::IsMember({"on", "off"});
  sub->add_option("archive", f->o.path, "TorchScript archive")->required();
  f->run.help = {
      {"--method", "Method to time"},
      {"--arg", "Argument of any type, by position (VALUE) or name (NAME=VALUE), typed by the method's schema "
                "(see tsctl-validate(1): 1x3x8x8:float32, 3, 0.5, true, null, '[1, 2]', '{\"a\": 1}')"},
      {"--load-inputs", "Arguments from FILE: torch.save of the argument tuple, or .npy/.npz for tensors"},
      {"--data-loader-script", "FILE.py[:FUNC]: arguments from the first item FUNC (default load_data) yields, run in "
                               "the embedded Python (see tsctl-validate(1))"},
      {"--no-infer", "Only given or stored inputs: do not infer them in a child process"},
      {"--seed", "Seed of the random values of generated inputs (default 0)"},
      {"--timeout", "Seconds the benchmark (with --sweep: each combination) may take before its child is killed"},
      {"--memory-limit", "How far the benchmark's child may grow past what it inherited, e.g. 4G (default: min(8G, half "
                         "of this machine's memory); not with --device cuda)"},
  };
  f->run.max_timeout_seconds = 1e7;
  AddRunFlags(sub, f->o, f->run, kAllRunFlags);
  auto* warmup = sub->add_option("--warmup", f->o.warmup, "Untimed calls before timing (the warm-up curve), instead of --warmup-time")
                      ->check(NumberIn(0, 1e9, true, "an integer from 0 to 1000000000"));
  sub->add_option("--warmup-time", f->o.warmup_seconds, "Seconds of untimed calls before timing (at least one call; 0: none)")
      ->check(NumberIn(0, 1e6, false, "a number of seconds from 0 to 1000000"))
      ->capture_default_str()
      ->excludes(warmup);
  sub->add_option("--triton-config", f->triton_config,
                  "Write a whole Triton config.pbtxt to FILE: platform pytorch_libtorch, or torch_aoti for an AOTInductor "
                  "package; inputs and outputs at the shapes and dtypes benchmarked; the instance group; with --sweep, "
                  "the recommended parameters");
  sub->add_option("--save-outputs", f->o.save_outputs_path,
                  "After timing, run once more and write the outputs to FILE (torch.load reads it; FILE.npy: NumPy's format, one tensor)");
  f->iters = sub->add_option("--iters", f->o.iters, "Timed calls per instance, instead of --duration")
                 ->check(NumberIn(1, 1e9, true, "an integer from 1 to 1000000000"));
  f->duration = sub->add_option("--duration", f->o.duration_seconds,
                                "Seconds of timed calls per instance (at least one call), as trtexec; --sweep: 0.5 per combination")
                    ->check(NumberIn(0.001, 1e6, false, "a number of seconds from 0.001 to 1000000"))
                    ->capture_default_str()
                    ->excludes(f->iters);
  sub->add_option("--threads", f->o.threads, "Intra-op threads (at::set_num_threads); Triton INTRA_OP_THREAD_COUNT")
      ->check(NumberIn(1, 4096, true, "an integer from 1 to 4096"));
  sub->add_option("--interop-threads", f->o.interop_threads, "Inter-op threads; Triton INTER_OP_THREAD_COUNT")
      ->check(NumberIn(1, 4096, true, "an integer from 1 to 4096"));
  sub->add_option("--instances", f->o.instances, "Concurrent instances, each on its own thread")
      ->check(NumberIn(1, 1024, true, "an integer from 1 to 1024"))
      ->capture_default_str();
  sub->add_flag("--share-weights", f->o.share_weights, "One module for all instances (Triton ENABLE_WEIGHT_SHARING)");
  sub->add_option("--optimized-execution", f->optimized, "Graph executor optimization (Triton DISABLE_OPTIMIZED_EXECUTION inverted)")
      ->check(on_off)->capture_default_str();
  sub->add_option("--inference-mode", f->inference, "c10::InferenceMode, else NoGradGuard (Triton INFERENCE_MODE)")
      ->check(on_off)->capture_default_str();
  sub->add_option("--jit-profiling", f->profiling, "Profiling executor mode (Triton ENABLE_JIT_PROFILING); default: LibTorch's")->check(on_off);
  sub->add_option("--jit-executor", f->executor, "JIT executor mode (Triton ENABLE_JIT_EXECUTOR); default: LibTorch's")->check(on_off);
  sub->add_option("--tensor-fuser", f->fuser, "Tensor-expression fuser (Triton ENABLE_TENSOR_FUSER); default: LibTorch's")->check(on_off);
  sub->add_flag("--freeze", f->o.settings.freeze, "torch::jit::freeze the module first");
  sub->add_flag("--optimize-for-inference", f->o.settings.optimize_for_inference, "torch::jit::optimize_for_inference (implies --freeze)");
  sub->add_flag("--cache-cleaning", f->o.settings.cache_cleaning, "CUDA: empty the caching allocator after each call (Triton ENABLE_CACHE_CLEANING)");
  sub->add_option("--shapes", f->shapes,
                  "NAME:MIN,OPT,MAX: time the tensor argument NAME at three shapes (trtexec's --minShapes/--optShapes/"
                  "--maxShapes), e.g. x:1x3x224x224,8x3x224x224,32x3x224x224; repeatable, one per argument")
      ->allow_extra_args(false);
  sub->add_flag("--sweep", f->sweep, "Time every combination of the execution settings and print Triton's parameters for the fastest");
  sub->add_option("--percentiles", f->percentiles, "Percentiles to report, comma-separated")->capture_default_str();
  sub->add_flag("--profile", f->o.profile, "Per-operator calls, total and self time (global operator callbacks; a .pte: ExecuTorch's event tracer)");
  sub->add_option("--etdump", f->o.etdump_path, "An ExecuTorch program: write the ETDump its runtime's event tracer recorded to FILE (implies --profile)");
  sub->add_flag("--profile-shapes", f->o.profile_shapes, "Split the profile by input shapes (implies --profile)");
  sub->add_option("--profile-sample", f->o.profile_sample, "Sample operator calls with this probability (implies --profile)")
      ->capture_default_str();
  sub->add_option("--trace-out", f->o.trace_path, "Write a Chrome trace JSON of the operator calls (opens in Perfetto)");
  sub->add_flag("--log-api-usage", f->o.log_api_usage, "Report PyTorch API usage events (c10::SetAPIUsageLogger)");
  sub->add_option("--model-id", f->o.model_id, "Id the operator callbacks see for this model (default: the path)");
  AddAllowLoadHooksFlag(sub, f->o.allow_load_hooks);
  AddFormatOption(sub, f->format, {OutputFormat::kText, OutputFormat::kJson});  // json: raw nanoseconds
  sub->add_option("--report", f->report,
                  "Also write an offline HTML page to FILE.html: latency histogram, percentiles, every call's latency "
                  "(warm-up first), the --profile operators as bars; with --sweep, its table and chart");
  return [f, &global] { return RunBench(*f, global); };
}

}  // namespace tsctl::cli
