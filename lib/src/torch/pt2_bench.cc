// bench of a .pt2 AOTInductor package, in the child: load (timed), warm-up,
// timed calls of AOTIModelPackageLoader::run, as Python's runner
// (torch._inductor.aoti_load_package) calls it.
#include <ATen/Parallel.h>
#include <sys/resource.h>
#include <torch/version.h>

#include <chrono>
#include <optional>

#include "arguments.h"
#include "operator_libraries.h"
#include "bench_phases.h"
#include "backend.h"
#include "compare_values.h"
#include "pt2_package.h"
#include "pt2_runner.h"
#include "tensors.h"
#include "py_values.h"
#include "torch_util.h"
#include "tsctl/error.h"

namespace tsctl {

#ifndef TSCTL_HAVE_AOTI
BenchResult BenchPt2(const BenchOptions&) {
  throw Error(ErrorKind::kUnavailable, "LibTorch " TORCH_VERSION " has no AOTInductor package loader: running a .pt2 needs a LibTorch 2.x build");
}
#else
namespace {

// What bench's options ask that a package cannot do: a usage error naming it.
void RequireAotiOptions(const BenchOptions& o) {
  const char* flag = nullptr;
  if (o.method != "forward") flag = "--method";
  else if (o.instances > 1) flag = "--instances";
  else if (o.profile || o.profile_shapes || !o.trace_path.empty()) flag = "--profile/--trace";
  else if (o.settings.freeze || o.settings.optimize_for_inference) flag = "--freeze/--optimize-for-inference";
  else if (o.device != "cpu") flag = "--device";
  if (flag) {
    throw Error(ErrorKind::kUsage, std::string(flag) +
                                       " applies to TorchScript archives; an AOTInductor package runs forward once per "
                                       "call, on the device it was compiled for (bench times it on the CPU)");
  }
}

// The inputs: given (typed by the package's inputs), or loaded from a file.
std::vector<at::Tensor> Pt2BenchInputs(const BenchOptions& o, BenchResult& r) {
  std::vector<std::string>& described = r.inputs;
  std::vector<size_t> at;  // the argument position behind each described input
  std::vector<ArgSpec> given = ArgsFromInputs(o.inputs);
  given.insert(given.end(), o.args.begin(), o.args.end());
  at::Generator gen = at::detail::createCPUGenerator(o.seed);
  std::vector<c10::IValue> args;
  if (!given.empty()) {
    const c10::FunctionSchema schema = Pt2Schema(o.pt2, given.size());
    given = ApplyValueRanges(given, Formals(schema), o.value_ranges);  // as for a TorchScript archive
    args = BuildArguments(schema, given, gen, &at);
    for (const ArgSpec& a : given) described.push_back((a.name.empty() ? "" : a.name + "=") + a.value);
  } else if (!o.load_inputs_path.empty() || !o.pt2.sample_inputs_path.empty()) {
    // --load-inputs, or the package's data/sample_inputs (ResolveInputs's kSample).
    const bool loaded = !o.load_inputs_path.empty();
    args = Pt2ArgumentList(LoadValueFile(loaded ? o.load_inputs_path : o.pt2.sample_inputs_path), o.input_source);
    for (size_t i = 0; i < args.size(); ++i) {
      described.push_back(DescribeValue(args[i]));
      at.push_back(i);
    }
  } else {
    throw Error(ErrorKind::kUsage, "no inputs known: pass --input SHAPE:DTYPE for each input of the package, or --load-inputs FILE");
  }
  for (size_t i : at) r.input_tensors.push_back(i < args.size() ? DescOf(args[i]) : std::nullopt);
  return TensorsOf(args);
}

}  // namespace

BenchResult BenchPt2(const BenchOptions& o) {
  RequireAotiOptions(o);
  LoadOperatorLibraries(o.load_libraries);
  BenchResult r;
  r.path = o.path;
  r.method = o.method;
  r.device = o.device;
  r.input_source = o.input_source;
  r.settings = std::string("AOTInductor (AOTIModelPackageLoader::run), ") + (o.settings.inference_mode ? "inference mode" : "no_grad");
  r.libtorch_version = TORCH_VERSION;
  r.instances = 1;
  r.aoti = true;
  if (o.interop_threads > 0) at::set_num_interop_threads(o.interop_threads);
  if (o.threads > 0) at::set_num_threads(o.threads);
  r.threads = at::get_num_threads();
  r.interop_threads = at::get_num_interop_threads();
  InstallWarningHandler();
  uint64_t t0 = BenchNowNs();
  AotiPackage package(o.path, o.pt2.model);  // kTorch with the loader's message
  r.load_ns = BenchNowNs() - t0;
  const std::vector<at::Tensor> inputs = Pt2BenchInputs(o, r);
  std::optional<c10::InferenceMode> inference;
  std::optional<torch::NoGradGuard> no_grad;
  if (o.settings.inference_mode) inference.emplace(); else no_grad.emplace();
  const PhaseBound warmup = WarmupBound(o), timing = TimingBound(o);
  try {
    QuietStderr quiet;
    TimePhase(warmup, r.warmup_ns, [&] { package.Run(inputs); }, [] {}, PhaseTicker(o, ProgressEvent::Kind::kWarmup, warmup));
    const uint64_t start = BenchNowNs();
    r.latencies_ns.reserve(static_cast<size_t>(std::max(timing.calls, 1)));
    std::vector<at::Tensor> last;  // the last timed call's outputs
    TimePhase(timing, r.latencies_ns, [&] { last = package.Run(inputs); }, [] {}, PhaseTicker(o, ProgressEvent::Kind::kTiming, timing));
    r.wall_ns = BenchNowNs() - start;
    if (!o.save_outputs_path.empty()) {
      last = package.Run(inputs);  // one more call, not timed
      SaveValueFile(package.Outputs(last), o.save_outputs_path);
    }
    // The outputs' types (the report, a Triton config), from the last call.
    for (const OutputSummary& leaf : SummarizeOutputs(package.Outputs(last), "output")) {
      r.outputs.push_back({leaf.name, leaf.desc, leaf.tensor});
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kTorch, "running the AOTInductor model failed: " + std::string(FromTorch(e).what()));
  }
  r.first_ns = !r.warmup_ns.empty() ? r.warmup_ns.front() : (r.latencies_ns.empty() ? 0 : r.latencies_ns.front());
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  r.peak_rss_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
  return r;
}
#endif

}  // namespace tsctl
