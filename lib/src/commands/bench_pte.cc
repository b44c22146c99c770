#include "bench_pte.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "../text/json_util.h"
#include "../zip/npz.h"
#include "pte_child.h"
#include "torch_child.h"
#include "torch_child_sandbox.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/inputs.h"
#include "tsctl/pte.h"

namespace tsctl {
namespace {

using nlohmann::json;

// The flags a .pte does not take (yet): one usage line naming the first.
void RequirePteFlags(const BenchOptions& o) {
  auto refuse = [](const std::string& what) {
    throw Error(ErrorKind::kUsage, what + " does not apply to an ExecuTorch program (it runs on inputs from --input "
                                          "and its metadata, on ExecuTorch's CPU runtime, one instance)");
  };
  RequirePteInputs(o.args, o.load_inputs_path, o.data_loader, o.inputs);
  if (!o.device.empty() && o.device != "cpu") refuse("--device " + o.device);
  if (o.instances > 1) refuse("--instances");
  if (o.profile_shapes || o.profile_sample < 1 || !o.trace_path.empty()) refuse("--profile-shapes, --profile-sample and --trace");
  if (!o.save_outputs_path.empty()) refuse("--save-outputs");
  if (o.log_api_usage) refuse("--log-api-usage");
  if (o.interop_threads > 0) refuse("--interop-threads (ExecuTorch has one threadpool: --threads)");
  if (!o.load_libraries.empty()) refuse("--load-library");
}

std::string SpecShape(const json& v) {
  if (v.value("kind", "") != "tensor") return v.value("kind", "?") + (v.contains("value") ? " " + v["value"].dump() : "");
  std::string s;
  for (const json& d : v["shape"]) s += (s.empty() ? "" : "x") + d.dump();
  return (s.empty() ? "scalar" : s) + ":" + v.value("dtype", "?");
}

// --profile: the ETDump written (--etdump), then read back into the table.
void ProfileFromETDump(const BenchOptions& o, const std::string& etdump, const json& m, BenchResult& b) {
  if (m.contains("profile_error")) {
    b.warnings.push_back("--profile: " + m["profile_error"].get<std::string>());
    return;
  }
  if (etdump.empty()) {
    b.warnings.push_back("--profile: the runtime's event tracer sent nothing");
    return;
  }
  if (!o.etdump_path.empty()) WriteFileAtomically(o.etdump_path, etdump);
  b.ops = PteOperatorProfile(ReadETDump(etdump, "the runtime's ETDump"), ReadPte(o.path, {.chains = true}), b.method, b.profiled_ns);
}

// What the runner is asked for bench: the method timed, its inputs, the
// phases, and with --profile the traced calls.
PteRunRequest PteBenchRequest(const BenchOptions& o) {
  PteRunRequest request;
  request.program = o.path;
  // A program's tensors kept in a .ptd: the one named as the program beside it.
  if (std::string data = PteDataBeside(o.path); !data.empty()) request.data.push_back(data);
  request.method = o.method == "forward" ? "" : o.method;
  for (const InputSpec& in : o.inputs) request.inputs.push_back(in.ToString());
  request.load_inputs = o.load_inputs_path;
  for (const ArgSpec& a : o.args) request.args.push_back(a.value);
  request.timeout_seconds = o.timeout_seconds;
  request.memory_bytes = o.memory_limit_bytes ? o.memory_limit_bytes : DefaultChildMemoryLimit();
  request.sandbox = SandboxOn();
  request.bench = true;
  request.threads = o.threads;
  request.warmup = o.warmup;
  request.warmup_seconds = o.warmup_seconds;
  request.iters = o.iters;
  request.duration_seconds = o.duration_seconds;
  // The traced calls: as many as the timed ones, at most 1000 (the tracer
  // keeps every event in memory).
  if (o.profile) request.profile = o.iters > 0 ? std::min(o.iters, 1000) : 100;
  return request;
}

}  // namespace

void RequirePteInputs(const std::vector<ArgSpec>& args, const std::string& load_inputs, const std::string& data_loader,
                      const std::vector<InputSpec>& inputs) {
  if (!data_loader.empty()) {
    throw Error(ErrorKind::kUsage, "--data-loader does not apply to an ExecuTorch program yet "
                                   "(--input, --arg and --load-inputs FILE.npz do)");
  }
  for (const ArgSpec& a : args) {
    if (!a.name.empty()) {
      throw Error(ErrorKind::kUsage, "an ExecuTorch program's inputs have no names: give --arg VALUE by position (after the --inputs), not " +
                                         EscapeText(a.name) + "=...");
    }
  }
  if (load_inputs.empty()) return;
  if (!IsNpzPath(load_inputs) && !IsNpyPath(load_inputs)) {
    throw Error(ErrorKind::kUsage, "an ExecuTorch program's inputs are loaded from NumPy's files: name an .npz "
                                   "(arr_0, arr_1, ...: one per input) or .npy (one tensor), not " + EscapeText(load_inputs));
  }
  if (!inputs.empty() || !args.empty()) {
    throw Error(ErrorKind::kUsage, "--input/--arg and --load-inputs are one or the other for an ExecuTorch program");
  }
}

std::string PteIdentifier(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  in.read(head, sizeof head);
  return in.gcount() == sizeof head ? std::string(head + 4, 2) : "";
}

std::string PteDataBeside(const std::string& path) {
  std::filesystem::path ptd(path);
  ptd.replace_extension(".ptd");
  std::error_code ec;
  return std::filesystem::is_regular_file(ptd, ec) ? ptd.string() : "";
}

BenchResult BenchPte(const BenchOptions& o) {
  RequirePteFlags(o);
  // The static reading first, as validate's pte.format: the runtime is never
  // given a file tsctl's reader refuses (its one line, kFormat).
  ReadPte(o.path);
  const std::string id = PteIdentifier(o.path);
  if (id == "FT") throw Error(ErrorKind::kUsage, "an ExecuTorch data file (.ptd) holds tensors, not a program to time");
  if (id == "BP") throw Error(ErrorKind::kUsage, "a bundled program (.bpte): bench times a .pte program");
  PteRunOutcome outcome = RunPteChild(PteBenchRequest(o));
  ShowChildOutput(outcome.output, "tsctl: bench: " + EscapeText(o.path) + ": ExecuTorch: ");
  if (!outcome.stopped.empty()) throw Error(ErrorKind::kTorch, outcome.stopped + " (stopped before it ran)");
  if (outcome.result.empty()) throw Error(ErrorKind::kTorch, "the ExecuTorch runtime " + outcome.died);
  json r = json::parse(outcome.result, nullptr, false);
  if (r.is_discarded() || !r.is_object()) throw Error(ErrorKind::kTorch, "the ExecuTorch runner sent a result tsctl cannot read");
  if (r.contains("program_error")) {
    throw Error(ErrorKind::kTorch, "ExecuTorch could not load the program: " + r["program_error"].get<std::string>() +
                                       " (tsctl validate says why)");
  }
  if (!r.contains("methods") || r["methods"].empty()) {
    throw Error(ErrorKind::kUsage, "the program has no method '" + o.method + "'");
  }
  const json& m = r["methods"][0];
  const std::string name = m.value("name", "?");
  for (const char* key : {"load_error", "input_error", "run_error"}) {
    if (m.contains(key)) {
      throw Error(ErrorKind::kTorch, name + ": " + m[key].get<std::string>() + " (tsctl validate says why)");
    }
  }
  BenchResult b;
  b.path = o.path;
  b.warmup_count = o.warmup;
  b.warmup_seconds = o.warmup >= 0 ? 0 : o.warmup_seconds;
  b.iters_count = o.iters;
  b.duration_seconds = o.iters > 0 ? 0 : o.duration_seconds;
  b.method = name;
  b.device = "cpu";
  b.runtime = PteRuntimeVersion();
  b.threads = r.value("threads", 0);
  b.settings = "ExecuTorch's defaults (optimized and quantized CPU kernels, XNNPACK)";
  b.input_source = !o.load_inputs_path.empty() ? "--load-inputs " + o.load_inputs_path
                   : std::string(o.inputs.empty() ? "" : "--input and ") + (o.args.empty() ? "" : "--arg and ") +
                         "the method's metadata";
  for (const json& in : m.value("inputs", json::array())) {
    b.inputs.push_back(SpecShape(in));
    b.input_tensors.push_back(std::nullopt);
  }
  b.load_ns = r.value("program_load_ns", uint64_t{0}) + m.value("load_ns", uint64_t{0});
  b.warmup_ns = m.value("warmup_ns", std::vector<uint64_t>{});
  b.latencies_ns = m.value("latencies_ns", std::vector<uint64_t>{});
  b.wall_ns = m.value("wall_ns", uint64_t{0});
  // The runner's caps on a phase bounded by time (runner_main.cc).
  if (o.warmup < 0 && b.warmup_ns.size() >= 100000) {
    b.warnings.push_back("the warm-up stopped at 100000 calls before --warmup-time ran out");
  }
  if (o.iters <= 0 && b.latencies_ns.size() >= 1000000) {
    b.warnings.push_back("the timed phase stopped at 1000000 calls before --duration ran out");
  }
  b.first_ns = !b.warmup_ns.empty() ? b.warmup_ns.front() : (b.latencies_ns.empty() ? 0 : b.latencies_ns.front());
  size_t i = 0;
  for (const json& out : m.value("outputs", json::array())) {
    b.outputs.push_back({"output" + (m["outputs"].size() > 1 ? "[" + std::to_string(i) + "]" : std::string()), SpecShape(out), std::nullopt});
    ++i;
  }
  b.peak_rss_bytes = r.value("peak_rss_bytes", uint64_t{0});
  if (o.profile) ProfileFromETDump(o, outcome.etdump, m, b);
  return b;
}

std::vector<std::string> PteExternalTensors(const PteProgram& program) {
  std::set<std::string> external;
  for (const PteStoredTensor& t : program.tensors) {
    if (t.tensor.location == PteDataLocation::kExternal) external.insert(t.tensor.fqn);
  }
  return {external.begin(), external.end()};
}

std::set<std::string> PteDataKeys(const PteFile& data) {
  std::set<std::string> keys;
  for (const PteDataTensor& t : data.flat_tensor.tensors) keys.insert(t.fqn);
  for (const PteNamedData& n : data.flat_tensor.named_data) keys.insert(n.key);
  return keys;
}

}  // namespace tsctl
