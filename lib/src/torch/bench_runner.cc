// The timing loop of `tsctl bench`: load, warm up, time, profile.
#include "bench_runner.h"

#include "arguments.h"
#include "bench_phases.h"
#include "backend.h"
#include "compare_values.h"
#include "infer_inputs.h"
#include "py_values.h"

#include <ATen/Parallel.h>
#include <c10/util/Logging.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <sys/resource.h>
#include <unistd.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

// TSCTL_WITH_CUDA: set by CMake when the LibTorch found has CUDA; Debian's
// CPU build ships the header but not the library. With
// TSCTL_CUDA_AT_RUN_TIME the plugin does not link c10_cuda: the allocator
// is reached through c10's device-generic interface (LibTorch 2.8+), which
// libtorch_cuda fills in when it is loaded.
#if defined(TSCTL_CUDA_AT_RUN_TIME) && __has_include(<c10/core/CachingDeviceAllocator.h>)
#include <c10/core/CachingDeviceAllocator.h>
#define TSCTL_HAVE_CUDA_ALLOCATOR 1
namespace tsctl {
namespace {
void EmptyCudaCache() { c10::getDeviceAllocator(c10::DeviceType::CUDA)->emptyCache(); }
int64_t CudaPeakBytes(c10::DeviceIndex index) {
  return c10::getDeviceAllocator(c10::DeviceType::CUDA)->getDeviceStats(index).allocated_bytes[0].peak;
}
}  // namespace
}  // namespace tsctl
#elif defined(TSCTL_WITH_CUDA) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#define TSCTL_HAVE_CUDA_ALLOCATOR 1
namespace tsctl {
namespace {
void EmptyCudaCache() { c10::cuda::CUDACachingAllocator::emptyCache(); }
// The stats type moved between releases; index 0 is the aggregate in all.
int64_t CudaPeakBytes(c10::DeviceIndex index) {
  return c10::cuda::CUDACachingAllocator::getDeviceStats(index).allocated_bytes[0].peak;
}
}  // namespace
}  // namespace tsctl
#endif

#include "op_profiler.h"
#include "tensors.h"
#include "torch_util.h"
#include "operator_libraries.h"
#include "tsctl/torch_backend.h"

namespace tsctl {
namespace {

struct ApiUsage {
  std::mutex mu;
  std::map<std::string, uint64_t> counts;
};
ApiUsage& Usage() {
  static ApiUsage u;
  return u;
}

void ApplySettings(const ExecutionSettings& s) {
  torch::jit::setGraphExecutorOptimize(s.optimized_execution);
  if (s.jit_profiling) torch::jit::getProfilingMode() = *s.jit_profiling;
  if (s.jit_executor) torch::jit::getExecutorMode() = *s.jit_executor;
  if (s.tensor_fuser) torch::jit::setTensorExprFuserEnabled(*s.tensor_fuser);
}

torch::jit::Module Load(const BenchOptions& o, const torch::Device& device) {
  torch::jit::Module m = LoadModule(o.load_path.empty() ? o.path : o.load_path);
  try {
    m.to(device);
    m.eval();
    if (o.settings.freeze || o.settings.optimize_for_inference) m = torch::jit::freeze(m);
    if (o.settings.optimize_for_inference) m = torch::jit::optimize_for_inference(m);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FromTorch(e);
  }
  return m;
}

// One instance's loop over one phase, latencies appended; the last call's
// outputs kept in `last` when given.
void TimeCalls(torch::jit::Method& method, const std::vector<c10::IValue>& inputs, bool cuda, PhaseBound bound,
               std::vector<uint64_t>& out, bool cache_cleaning, const std::function<void(int, uint64_t)>& tick,
               c10::IValue* last = nullptr) {
  TimePhase(
      bound, out,
      [&] {
        c10::IValue r = method(inputs);
        if (cuda) torch::cuda::synchronize();
        if (last) *last = std::move(r);
      },
      [&] {
        if (cache_cleaning && cuda) {
#ifdef TSCTL_HAVE_CUDA_ALLOCATOR
          EmptyCudaCache();
#endif
        }
      },
      tick);
}

// The autograd mode of a run, per --inference-mode: InferenceMode, else
// NoGradGuard. Thread-local, like the guards it holds.
class RunModeGuard {
 public:
  explicit RunModeGuard(bool inference_mode) {
    if (inference_mode) inference_.emplace(); else no_grad_.emplace();
  }

 private:
  std::optional<c10::InferenceMode> inference_;
  std::optional<torch::NoGradGuard> no_grad_;
};

// The report's fixed fields, and the process settings the options ask for
// (threads, the API usage logger, the JIT's execution settings).
BenchResult StartResult(const BenchOptions& o) {
  BenchResult r;
  r.path = o.path;
  r.method = o.method;
  r.device = o.device;
  r.input_source = o.input_source;
  r.settings = o.settings.Describe();
  r.libtorch_version = TORCH_VERSION;
  r.instances = std::max(1, o.instances);
  r.profile_sample = o.profile_sample;
  for (const auto& s : o.inputs) r.inputs.push_back(s.ToString());
  if (o.interop_threads > 0) {
    try {
      at::set_num_interop_threads(o.interop_threads);
    } catch (const std::exception& e) {
      r.warnings.push_back(std::string("--interop-threads not applied: ") + FromTorch(e).what());
    }
  }
  if (o.threads > 0) at::set_num_threads(o.threads);
  r.threads = at::get_num_threads();
  r.interop_threads = at::get_num_interop_threads();
  if (o.log_api_usage) {
    c10::SetAPIUsageLogger([](const std::string& event) {
      std::lock_guard<std::mutex> lock(Usage().mu);
      ++Usage().counts[event];
    });
  }
  ApplySettings(o.settings);
  return r;
}

// Loads one module per instance (one for all with --share-weights); the
// first load is timed (load_ns).
std::vector<torch::jit::Module> LoadInstances(const BenchOptions& o, const torch::Device& device,
                                              const std::shared_ptr<ModelDebugInfo>& debug_info, BenchResult& r) {
  std::vector<torch::jit::Module> modules;
  c10::DebugInfoGuard tag(c10::DebugInfoKind::PRODUCER_INFO, debug_info);
  uint64_t t0 = BenchNowNs();
  if (o.settings.inference_mode) {
    c10::InferenceMode guard;
    modules.push_back(Load(o, device));
  } else {
    modules.push_back(Load(o, device));
  }
  r.load_ns = BenchNowNs() - t0;
  for (int i = 1; i < r.instances && !o.share_weights; ++i) modules.push_back(Load(o, device));
  return modules;
}

// Refuses an input larger than this machine's memory before it is built.
void RequireFits(const std::vector<ArgSpec>& given) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const uint64_t memory = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : UINT64_MAX;
  for (const ArgSpec& a : given) {
    if (ArgumentBytes(a.value) > memory) {
      throw Error(ErrorKind::kUsage, "input " + (a.name.empty() ? "" : a.name + "=") + a.value +
                                         " needs more memory than this machine has (" + std::to_string(memory >> 30) +
                                         " GiB)");
    }
  }
}

// The method's arguments: given (--input/--arg), loaded (--load-inputs),
// bundled in the archive, or none; described in the report, on the device.
std::vector<c10::IValue> BenchInputs(const BenchOptions& o, torch::jit::Module& module, const torch::Device& device,
                                     BenchResult& r) {
  const c10::FunctionSchema& schema = FindMethod(module, o.method).function().getSchema();  // throws with the list
  at::Generator gen = at::detail::createCPUGenerator(o.seed);
  std::vector<c10::IValue> inputs;
  std::vector<ArgSpec> given = ArgsFromInputs(o.inputs);
  given.insert(given.end(), o.args.begin(), o.args.end());
  given = ApplyValueRanges(given, Formals(schema), o.value_ranges);
  std::vector<size_t> described;  // the argument position behind each of r.inputs
  if (!given.empty()) {
    RequireFits(given);
    inputs = BuildArguments(schema, given, gen, &described);  // kUsage: says what the method takes
    r.inputs.clear();
    for (const ArgSpec& a : given) r.inputs.push_back((a.name.empty() ? "" : a.name + "=") + a.value);
  } else if (!o.load_inputs_path.empty()) {
    inputs = LoadArguments(schema, o.load_inputs_path, o.input_source);
    const auto& formal = schema.arguments();
    for (size_t i = 0; i < inputs.size(); ++i) {
      inputs[i] = Retype(formal[i + 1].type(), inputs[i]);
      r.inputs.push_back(DescribeValue(inputs[i]));
      described.push_back(i);
    }
  } else {
    std::string source;
    try {
      inputs = BundledInputs(module, o.method, source);
    } catch (const std::exception&) {
      inputs.clear();
    }
    if (!inputs.empty()) {
      r.input_source = source;
      for (size_t i = 0; i < inputs.size(); ++i) {
        r.inputs.push_back(DescribeValue(inputs[i]));
        described.push_back(i);
      }
    } else {
      inputs = BuildArguments(schema, {}, gen);  // kUsage if the method needs arguments
    }
  }
  for (auto& v : inputs) v = ToDevice(v, device);
  r.input_tensors.clear();
  for (size_t at : described) r.input_tensors.push_back(at < inputs.size() ? DescOf(inputs[at]) : std::nullopt);
  return inputs;
}

// What the instances' threads measured.
struct TimedRuns {
  std::vector<std::vector<uint64_t>> warm, timed;  // per instance
  uint64_t wall_ns = 0;
  c10::IValue last_out;  // instance 0's last timed call's outputs
};

// Warms up and times every instance on its own thread (the guards are
// thread-local); the profiler attaches between the two phases, when all
// instances have warmed up. Throws kTorch if a call fails.
TimedRuns RunInstances(const BenchOptions& o, std::vector<torch::jit::Module>& modules,
                       const std::vector<c10::IValue>& inputs, bool cuda,
                       const std::shared_ptr<ModelDebugInfo>& debug_info, int instances,
                       std::unique_ptr<OpProfiler>& profiler) {
  const PhaseBound warmup = WarmupBound(o), timing = TimingBound(o);
  TimedRuns runs;
  runs.warm.resize(static_cast<size_t>(instances));
  runs.timed.resize(static_cast<size_t>(instances));
  std::mutex result_mu;
  std::atomic<int> failures{0};
  std::string failure;
  std::barrier<> sync(instances + 1);
  auto instance = [&](int index) {
    try {
      InstallWarningHandler();
      c10::DebugInfoGuard tag(c10::DebugInfoKind::PRODUCER_INFO, debug_info);
      RunModeGuard mode(o.settings.inference_mode);
      torch::jit::Method method = modules[o.share_weights ? 0 : static_cast<size_t>(index)].get_method(o.method);
      auto ticker = [&](ProgressEvent::Kind phase, PhaseBound bound) -> std::function<void(int, uint64_t)> {
        return index == 0 ? PhaseTicker(o, phase, bound) : std::function<void(int, uint64_t)>();
      };
      auto& timed = runs.timed[static_cast<size_t>(index)];
      TimeCalls(method, inputs, cuda, warmup, runs.warm[static_cast<size_t>(index)], false, ticker(ProgressEvent::Kind::kWarmup, warmup));
      sync.arrive_and_wait();  // profiler attaches between the phases
      sync.arrive_and_wait();
      timed.reserve(static_cast<size_t>(std::max(timing.calls, 1)));
      TimeCalls(method, inputs, cuda, timing, timed, o.settings.cache_cleaning, ticker(ProgressEvent::Kind::kTiming, timing),
                index == 0 ? &runs.last_out : nullptr);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(result_mu);
      if (failures++ == 0) failure = FromTorch(e).what();
      sync.arrive_and_drop();
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < instances; ++i) threads.emplace_back(instance, i);
  sync.arrive_and_wait();  // all warmed up
  if (o.profile || !o.trace_path.empty()) {
    profiler = std::make_unique<OpProfiler>(o.profile_shapes, o.profile_sample, !o.trace_path.empty());
  }
  uint64_t start = BenchNowNs();
  sync.arrive_and_wait();  // go
  for (auto& t : threads) t.join();
  runs.wall_ns = BenchNowNs() - start;
  if (failures > 0) throw Error(ErrorKind::kTorch, "running " + o.method + " failed: " + failure);
  return runs;
}

// --save-outputs: one more run, neither timed nor profiled, whose outputs
// (on the CPU) Python's torch.load reads.
void SaveOutputs(const BenchOptions& o, torch::jit::Module& module, const std::vector<c10::IValue>& inputs,
                 c10::IValue& last_out) {
  try {
    RunModeGuard mode(o.settings.inference_mode);
    last_out = module.get_method(o.method)(inputs);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kTorch, "running " + o.method + " failed: " + FromTorch(e).what());
  }
  SaveValueFile(ToDevice(last_out, torch::Device(torch::kCPU)), o.save_outputs_path);
}

// The process's figures after the runs: API usage, peak memory (host, CUDA).
void AddProcessFigures(const BenchOptions& o, const torch::Device& device, BenchResult& r) {
  if (o.log_api_usage) {
    std::lock_guard<std::mutex> lock(Usage().mu);
    for (const auto& [k, v] : Usage().counts) r.api_usage.emplace_back(k, v);
  }
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  r.peak_rss_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
#ifdef TSCTL_HAVE_CUDA_ALLOCATOR
  if (device.is_cuda()) {
    r.cuda_peak_bytes = CudaPeakBytes(device.index() < 0 ? 0 : device.index());
  }
#endif
  if (device.is_cuda() && o.profile) {
    r.warnings.push_back("per-operator times are host times: LibTorch's operator callbacks give no device time");
  }
}

}  // namespace

BenchResult RunBench(const BenchOptions& o) {
  LoadOperatorLibraries(o.load_libraries);
  UseQuantizedEngine(o.quantized_engine);
  BenchResult r = StartResult(o);
  const torch::Device device = UsableDevice(o.device);
  const std::string model_id = o.model_id.empty() ? o.path : o.model_id;
  auto debug_info = std::make_shared<ModelDebugInfo>(model_id);
  std::vector<torch::jit::Module> modules = LoadInstances(o, device, debug_info, r);
  const std::vector<c10::IValue> inputs = BenchInputs(o, modules[0], device, r);

  std::unique_ptr<OpProfiler> profiler;
  TimedRuns runs = RunInstances(o, modules, inputs, device.is_cuda(), debug_info, r.instances, profiler);
  r.wall_ns = runs.wall_ns;
  r.warmup_ns = runs.warm[0];
  for (const auto& t : runs.timed) r.latencies_ns.insert(r.latencies_ns.end(), t.begin(), t.end());
  r.first_ns = !r.warmup_ns.empty() ? r.warmup_ns.front() : (r.latencies_ns.empty() ? 0 : r.latencies_ns.front());
  if (profiler) {
    r.ops = profiler->Stats(&r.profiled_ns);
    if (!o.trace_path.empty()) WriteChromeTrace(o.trace_path, profiler->Events(), model_id);
    if (!o.profile) r.ops.clear();
    profiler.reset();
  }
  if (!o.save_outputs_path.empty()) SaveOutputs(o, modules[0], inputs, runs.last_out);
  // The outputs' types (the report, a Triton config), from the last call.
  for (const OutputSummary& leaf : SummarizeOutputs(ToDevice(runs.last_out, torch::Device(torch::kCPU)), "output")) {
    r.outputs.push_back({leaf.name, leaf.desc, leaf.tensor});
    if (r.outputs.back().tensor) r.outputs.back().tensor->device = o.device;  // summarized on the CPU, computed there
  }
  AddProcessFigures(o, device, r);
  return r;
}

}  // namespace tsctl
