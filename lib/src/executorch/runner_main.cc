// tsctl-pte-runner: runs an ExecuTorch program on ExecuTorch's own C++
// runtime (PyPI's executorch wheel ships it: libexecutorch.so with the
// optimized CPU kernels, XNNPACK and the threadpool), started by tsctl for
// `validate` of a .pte (lib/src/executorch/pte_run.cc), never by hand. It
// links no LibTorch. It loads the program and each method, runs each method
// on inputs made from the method's own metadata (pte_run.h says how) twice,
// and sends one result (JSON) as a frame on descriptor 3; the runtime's log
// lines (a missing operator or backend is said there) go to its stdout and
// stderr, which tsctl reads, bounds and shows with -v. It confines itself
// first (sandbox.h: limits, Landlock, seccomp) unless told not to; a call
// the sandbox stops is a frame of its own.
//
//   tsctl-pte-runner --result-fd 3 PROGRAM [--data PTD]... [--method NAME] [--memory BYTES]
//                    [--cpu SECONDS] [--no-sandbox] [--no-run]
//                    [--bench [--warmup N | --warmup-seconds S] [--iters N | --duration S]]
//   tsctl-pte-runner --result-fd 3 --registry [--no-sandbox]
//     what this runtime registers (tsctl compat): every kernel (operator
//     name and kernel key) and every backend, as the result; no program.
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/platform/runtime.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "process.h"
#include "runner_support.h"
#include "sandbox.h"
#include "tsctl/dtype.h"
#include "tsctl/inputs.h"

// Module::method and Method::get_input are marked deprecated; they are the
// way to the values a program holds for its scalar inputs.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

using ::executorch::extension::Module;
using ::executorch::extension::TensorPtr;
using ::executorch::runtime::EValue;
using ::executorch::runtime::Error;
using ::executorch::runtime::Tag;
using nlohmann::json;

constexpr int kResultFd = 3;
constexpr char kResultFrame = 'R';
constexpr char kSandboxFrame = 'S';
// The line before a method's log lines (pte_child.h's kPteMethodMark).
constexpr char kMethodMark[] = "tsctl-pte-runner: method ";

// What to do with each method: load it, then (run) two runs compared, or
// (bench) warm-up calls and timed calls, each bounded by a count or a time.
struct Plan {
  bool run = true;
  bool bench = false;
  bool registry = false;         // --registry: list kernels and backends, no program
  bool bundled = false;          // --bundled: a .bpte's test cases (runner_bundled.cc)
  tsctl::BundledPlan tolerances; // --rtol, --atol: comma-separated, one or one per output
  int warmup = -1;               // calls; < 0: warmup_seconds
  double warmup_seconds = 0.2;
  int iters = 0;                 // calls; 0: duration_seconds
  double duration_seconds = 3;
  std::vector<tsctl::InputSpec> inputs;  // --input: the first tensor inputs
  std::vector<std::string> args;         // --arg VALUE: the inputs after them, by position
  std::string save_inputs, save_outputs; // --save-inputs/--save-outputs FORMAT ("npz", "npy"): frames 'I', 'O'
  std::string load_inputs;       // --load-inputs FILE.npz|.npy: the inputs, read into `arrays`
  tsctl::NumpyArrays arrays;
  int threads = 0;               // --threads N: the threadpool's size (0: ExecuTorch's default, one per core)
  int profile = 0;               // --profile N: N traced calls after the timed ones (frame 'E': the ETDump)
  std::string program;           // the program and its .ptd files (a profiled Module loads them again)
  std::vector<std::string> data;
};

// What --save-inputs/--save-outputs/--profile asked for, of the one method
// whose values are kept (RunMethods).
struct Saved {
  std::string inputs, outputs, error;
  std::string etdump;  // --profile
};

uint64_t Since(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

// bench: the warm-up calls, then the timed ones, each call's nanoseconds.
void BenchMethod(Module& module, const std::string& name, const std::vector<EValue>& inputs, const Plan& plan, json& m) {
  std::vector<uint64_t> warm, timed;
  // Nothing but the call between two calls: the outputs are described once,
  // after the last (each call's would stir the caches of the next).
  std::vector<EValue> last;
  auto call = [&](std::vector<uint64_t>& into) {
    const auto start = std::chrono::steady_clock::now();
    auto out = module.execute(name, inputs);
    into.push_back(Since(start));
    if (!out.ok()) {
      m["run_error"] = tsctl::ErrorName(out.error());
      return false;
    }
    last = std::move(*out);
    return true;
  };
  // A phase bounded by time stops at these many calls too (a program that
  // takes 300 ns a call would otherwise make ten million timings in 3 s).
  constexpr size_t kMaxWarmCalls = 100000, kMaxTimedCalls = 1000000;
  const auto warm_start = std::chrono::steady_clock::now();
  do {
    if (!call(warm)) return;
  } while (plan.warmup >= 0 ? static_cast<int>(warm.size()) < plan.warmup
                            : Since(warm_start) < plan.warmup_seconds * 1e9 && warm.size() < kMaxWarmCalls);
  const auto timed_start = std::chrono::steady_clock::now();
  do {
    if (!call(timed)) return;
  } while (plan.iters > 0 ? static_cast<int>(timed.size()) < plan.iters
                          : Since(timed_start) < plan.duration_seconds * 1e9 && timed.size() < kMaxTimedCalls);
  m["wall_ns"] = Since(timed_start);
  json outputs = json::array();
  for (const EValue& v : last) {
    uint64_t h = 0;
    outputs.push_back(tsctl::DescribeValue(v, h));
  }
  m["outputs"] = outputs;
  m["warmup_ns"] = warm;
  m["latencies_ns"] = timed;
  m["ran"] = true;
}

// `saved`: where this method's values go (null: a method whose are not kept).
json RunMethod(Module& module, const std::string& name, const Plan& plan, Saved* saved) {
  json m = {{"name", name}};
  // tsctl reads the runtime's log lines that follow as this method's.
  std::fprintf(stderr, "%s%s\n", kMethodMark, name.c_str());
  std::fflush(stderr);
  const auto load_start = std::chrono::steady_clock::now();
  if (Error e = module.load_method(name); e != Error::Ok) {
    m["load_error"] = tsctl::ErrorName(e);
    return m;
  }
  m["load_ns"] = Since(load_start);
  auto meta = module.method_meta(name);
  if (!meta.ok()) {
    m["load_error"] = "its metadata: " + tsctl::ErrorName(meta.error());
    return m;
  }
  std::vector<EValue> inputs;
  std::vector<TensorPtr> keep;
  json described = json::array();
  if (!tsctl::MakeInputs(module, name, *meta, plan.inputs, plan.args, plan.load_inputs.empty() ? nullptr : &plan.arrays,
                  inputs, keep, described, m)) {
    m["inputs"] = described;
    return m;
  }
  m["inputs"] = described;
  if (!plan.run) return m;
  if (plan.bench) {
    BenchMethod(module, name, inputs, plan, m);
    if (plan.profile > 0 && saved && m.contains("ran")) {
      m.update(tsctl::ProfileMethod(plan.program, plan.data, name, inputs, plan.profile, saved->etdump));
    }
    return m;
  }
  std::vector<uint64_t> first;
  for (int run = 0; run < 2; ++run) {
    auto out = module.execute(name, inputs);
    if (!out.ok()) {
      m["run_error"] = tsctl::ErrorName(out.error());
      return m;
    }
    json outputs = json::array();
    std::vector<uint64_t> hashes;
    for (const EValue& v : *out) {
      uint64_t h = 0;
      outputs.push_back(tsctl::DescribeValue(v, h));
      hashes.push_back(h);
    }
    if (run == 0) {
      m["outputs"] = outputs;
      first = hashes;
      try {
        if (saved && !plan.save_inputs.empty()) saved->inputs = tsctl::NumpyValues(inputs, plan.save_inputs == "npz");
        if (saved && !plan.save_outputs.empty()) saved->outputs = tsctl::NumpyValues(*out, plan.save_outputs == "npz");
      } catch (const std::exception& e) {
        saved->error = e.what();
      }
    } else {
      m["deterministic"] = hashes == first;
    }
  }
  m["ran"] = true;
  return m;
}

std::vector<double> Numbers(const std::string& list) {
  std::vector<double> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t end = std::min(list.find(',', at), list.size());
    out.push_back(std::stod(list.substr(at, end - at)));
    at = end + 1;
  }
  return out;
}

// The command line after --result-fd 3 (tsctl's; pte_child.cc writes it).
void ParseArgs(int argc, char** argv, std::string& program, std::string& method, std::vector<std::string>& data,
               tsctl::SandboxPolicy& policy, bool& sandbox, Plan& plan) {
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--data" && has_value) data.push_back(argv[++i]);
    else if (a == "--method" && has_value) method = argv[++i];
    else if (a == "--memory" && has_value) policy.address_space_bytes = std::stoull(argv[++i]);
    else if (a == "--cpu" && has_value) policy.cpu_seconds = std::stod(argv[++i]);
    else if (a == "--no-sandbox") sandbox = false;
    else if (a == "--no-run") plan.run = false;
    else if (a == "--bench") plan.bench = true;
    else if (a == "--arg" && has_value) plan.args.push_back(argv[++i]);
    else if (a == "--load-inputs" && has_value) plan.load_inputs = argv[++i];
    else if (a == "--threads" && has_value) plan.threads = std::max(0, std::atoi(argv[++i]));
    else if (a == "--registry") plan.registry = true;
    else if (a == "--bundled") plan.bundled = true;
    else if (a == "--save-inputs" && has_value) plan.save_inputs = argv[++i];
    else if (a == "--profile" && has_value) plan.profile = std::max(0, std::atoi(argv[++i]));
    else if (a == "--save-outputs" && has_value) plan.save_outputs = argv[++i];
    else if (a == "--rtol" && has_value) plan.tolerances.rtol = Numbers(argv[++i]);
    else if (a == "--atol" && has_value) plan.tolerances.atol = Numbers(argv[++i]);
    else if (a == "--input" && has_value) plan.inputs.push_back(tsctl::ParseInputSpec(argv[++i]));
    else if (a == "--warmup" && has_value) plan.warmup = std::atoi(argv[++i]);
    else if (a == "--warmup-seconds" && has_value) plan.warmup_seconds = std::atof(argv[++i]);
    else if (a == "--iters" && has_value) plan.iters = std::atoi(argv[++i]);
    else if (a == "--duration" && has_value) plan.duration_seconds = std::atof(argv[++i]);
    else program = a;
  }
}

// The result, with the peak memory, as the frame tsctl reads; then exit.
[[noreturn]] void Finish(json& result) {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) result["peak_rss_bytes"] = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  std::fflush(stdout);
  std::fflush(stderr);
  tsctl::WriteFrame(kResultFd, kResultFrame, result.dump(-1, ' ', false, json::error_handler_t::replace));
  _exit(0);
}

// Each method asked for (bench: one), its results in `result`, then the
// files --save-inputs/--save-outputs/--profile asked for as frames.
void RunMethods(Module& module, const std::unordered_set<std::string>& names, const std::string& method, const Plan& plan,
                json& result) {
  std::vector<std::string> run;
  for (const std::string& name : names) {
    if (!method.empty() && name != method) continue;
    if (plan.bench && method.empty() && name != "forward" && names.count("forward")) continue;
    run.push_back(name);
  }
  std::sort(run.begin(), run.end());
  json methods = json::array();
  // The method whose values --save-inputs/--save-outputs keep: forward, else the first run.
  Saved saved;
  const bool has_forward = std::find(run.begin(), run.end(), "forward") != run.end();
  for (const std::string& name : run) {
    methods.push_back(RunMethod(module, name, plan, name == (has_forward ? "forward" : run.front()) ? &saved : nullptr));
    if (plan.bench) break;  // one method is timed
  }
  result["methods"] = methods;
  if (!saved.error.empty()) result["save_error"] = saved.error;
  // Frames are at most 4 GiB; a bigger file is said, not sent.
  for (auto [type, bytes] : {std::pair<char, std::string*>{'I', &saved.inputs}, {'O', &saved.outputs}, {'E', &saved.etdump}}) {
    if (bytes->size() >= 0xffffffffu) result["save_error"] = "the values take 4 GiB or more";
    else if (!bytes->empty()) tsctl::WriteFrame(kResultFd, type, *bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // tsctl names the descriptor its result goes to; a person does not.
  if (argc < 3 || std::strcmp(argv[1], "--result-fd") != 0 || std::atoi(argv[2]) != kResultFd ||
      fcntl(kResultFd, F_GETFD) < 0) {
    std::fprintf(stderr, "tsctl-pte-runner: started by tsctl, not by hand\n");
    return 2;
  }
  std::string method;
  tsctl::SandboxPolicy policy;
  bool sandbox = true;
  Plan plan;
  const std::string& program = plan.program;
  const std::vector<std::string>& data = plan.data;
  try {
    ParseArgs(argc, argv, plan.program, method, plan.data, policy, sandbox, plan);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tsctl-pte-runner: %s\n", e.what());
    return 2;
  }
  if (plan.registry) {  // no program is read: the registry, and the library it is compiled into, before any sandbox
    executorch::runtime::runtime_init();
    json result = {{"runtime", "ExecuTorch"}};
    result.update(tsctl::Registry());
    tsctl::WriteFrame(kResultFd, kResultFrame, result.dump(-1, ' ', false, json::error_handler_t::replace));
    _exit(0);
  }
  if (sandbox) {
    policy.profile = tsctl::SandboxPolicy::Profile::kArchive;
    policy.read_files = data;
    if (!program.empty()) policy.read_files.push_back(program);
    if (!plan.load_inputs.empty()) policy.read_files.push_back(plan.load_inputs);
    policy.keep_fds = {kResultFd};
    // The program tsctl checked, handed over as its descriptor (pte_child.cc).
    if (program.rfind("/proc/self/fd/", 0) == 0) policy.keep_fds.push_back(std::atoi(program.c_str() + 14));
    tsctl::EnterSandbox(policy, kResultFd, kSandboxFrame);
  }
  executorch::runtime::runtime_init();
  json result = {{"runtime", "ExecuTorch"}};
  if (plan.threads > 0) tsctl::SetThreads(static_cast<uint32_t>(plan.threads));
  if (!plan.load_inputs.empty()) {
    try {
      plan.arrays = tsctl::ReadNumpyFile(plan.load_inputs);
    } catch (const std::exception& e) {
      result["program_error"] = std::string("--load-inputs: ") + e.what();
      Finish(result);
    }
  }
  result["threads"] = tsctl::Threads();
  if (plan.bundled) {
    plan.tolerances.run = plan.run;
    result.update(tsctl::RunBundled(program, data, method, plan.tolerances, kMethodMark, sandbox));
    Finish(result);
  }
  const auto load_start = std::chrono::steady_clock::now();
  Module module = data.empty() ? Module(program, Module::LoadMode::File) : Module(program, data, Module::LoadMode::File);
  if (Error e = module.load(); e != Error::Ok) {
    result["program_error"] = tsctl::ErrorName(e);
  } else if (auto names = module.method_names(); !names.ok()) {
    result["program_error"] = "its methods: " + tsctl::ErrorName(names.error());
  } else {
    result["program_load_ns"] = Since(load_start);
    if (sandbox) tsctl::LockFileWrites();
    RunMethods(module, *names, method, plan, result);
  }
  Finish(result);
}
