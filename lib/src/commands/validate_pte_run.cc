// validate of an ExecuTorch program on ExecuTorch's own runtime: pte.load
// (the program, then each method: a kernel or backend this runtime lacks is
// named, a WARN that the program needs a runtime with it), pte.run (each
// method on inputs made from its own metadata), pte.finite and
// pte.deterministic (two runs). The runtime runs in a child of its own
// (pte_child.h), confined like the LibTorch children.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "../text/json_util.h"
#include "tsctl/atomic_file.h"
#include "../zip/npz.h"
#include "bench_pte.h"
#include "pte_child.h"
#include "torch_child.h"
#include "torch_child_sandbox.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/inputs.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

using nlohmann::json;

// What the runtime said of what it lacks, from its log lines: "operator
// etnp::lstm.out" for "Missing operator: [0] etnp::lstm.out", "backend
// CoreMLBackend" for "Backend CoreMLBackend is not registered."; else its
// last error line ("E ... executorch:method.cpp:353] external_data_map is
// null" becomes "external_data_map is null").
struct RuntimeSaid {
  std::vector<std::string> lacks;
  std::string last_error;
};

void Add(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// The log's part before the first method's mark (`method` ""), or the
// method's: from its mark to the next.
std::string LogOf(const std::string& log, const std::string& method) {
  const std::string mark = std::string(kPteMethodMark);
  if (method.empty()) return log.substr(0, log.find(mark));
  const std::string own = mark + method + "\n";
  size_t at = log.find(own);
  if (at == std::string::npos) return log;  // cut off (the output's cap): all of it
  at += own.size();
  const size_t end = log.find(mark, at);
  return log.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

RuntimeSaid ReadRuntimeLog(const std::string& log) {
  RuntimeSaid said;
  size_t at = 0;
  while (at < log.size()) {
    size_t end = log.find('\n', at);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(at, end - at);
    at = end + 1;
    if (size_t m = line.find("Missing operator: "); m != std::string::npos) {
      std::string op = line.substr(m + 18);
      if (size_t close = op.find("] "); op.rfind('[', 0) == 0 && close != std::string::npos) op = op.substr(close + 2);
      Add(said.lacks, "operator " + op);
    } else if (size_t b = line.find("Backend "); b != std::string::npos && line.find(" is not registered", b) != std::string::npos) {
      Add(said.lacks, "backend " + line.substr(b + 8, line.find(" is not registered", b) - b - 8));
    }
    if (line.find("which is disabled in this build") != std::string::npos) {
      const size_t close = line.find("] ");
      Add(said.lacks, line.substr(close == std::string::npos ? 0 : close + 2));
    }
    if (line.rfind("E ", 0) == 0) {
      const size_t close = line.find("] ");
      said.last_error = close == std::string::npos ? line : line.substr(close + 2);
    }
  }
  return said;
}

std::string ValueShape(const json& v) {
  if (v.value("kind", "") != "tensor") {
    return v.value("kind", "?") + (v.contains("value") ? " " + v["value"].dump() : "");
  }
  std::string s = v.value("dtype", "?") + "[";
  bool first = true;
  for (const json& d : v["shape"]) {
    s += (first ? "" : ", ") + d.dump();
    first = false;
  }
  return s + "]";
}

std::string Shapes(const json& list) {
  std::string s;
  for (const json& v : list) s += (s.empty() ? "" : ", ") + ValueShape(v);
  return s.empty() ? "none" : s;
}

void Skip(std::vector<CheckResult>& out, const std::string& why) {
  out.push_back({check::kPteLoad, CheckStatus::kSkip, "not run: " + why});
}

void MethodRunChecks(const json& m, const std::string& log, const std::string& from, std::vector<CheckResult>& out,
                  bool& loaded_all) {
  const std::string name = m.value("name", "?");
  const RuntimeSaid said = ReadRuntimeLog(LogOf(log, name));
  const std::string prefix = name + ": ";
  if (m.contains("load_error")) {
    loaded_all = false;
    if (!said.lacks.empty()) {
      out.push_back({check::kPteLoad, CheckStatus::kWarn,
                     prefix + "needs what this runtime (" + PteRuntimeVersion() + ") lacks: " + JoinAll(said.lacks, "; ") +
                         " (a runtime with it runs the program)"});
    } else {
      out.push_back({check::kPteLoad, CheckStatus::kFail,
                     prefix + "ExecuTorch could not load the method: " + m["load_error"].get<std::string>() +
                         (said.last_error.empty() ? "" : "; the runtime said: " + said.last_error)});
    }
    return;
  }
  if (!m.contains("outputs") && !m.contains("run_error") && !m.contains("input_error")) return;  // --no-run
  if (m.contains("input_error")) {
    out.push_back({check::kPteRun, CheckStatus::kSkip, prefix + "not run: " + m["input_error"].get<std::string>()});
    return;
  }
  CheckResult run{check::kPteRun, CheckStatus::kPass, ""};
  run.model_ran = true;
  if (m.contains("run_error")) {
    run.status = CheckStatus::kFail;
    run.message = prefix + "execute failed on inputs from " + from + " (" + Shapes(m.value("inputs", json::array())) +
                  "): " + m["run_error"].get<std::string>() + (said.last_error.empty() ? "" : "; the runtime said: " + said.last_error);
    out.push_back(run);
    return;
  }
  run.message = prefix + "ran on inputs from " + from + " (" + Shapes(m.value("inputs", json::array())) + "): " +
                Shapes(m.value("outputs", json::array()));
  out.push_back(run);
  std::vector<std::string> nonfinite;
  size_t i = 0;
  for (const json& o : m.value("outputs", json::array())) {
    if (o.value("nonfinite", 0) > 0) nonfinite.push_back("output " + std::to_string(i) + " has " + std::to_string(o.value("nonfinite", 0)) + " NaN/Inf");
    ++i;
  }
  out.push_back({check::kPteFinite, nonfinite.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 prefix + (nonfinite.empty() ? "outputs contain no NaN or Inf" : JoinAll(nonfinite, "; "))});
  const bool same = m.value("deterministic", false);
  out.push_back({check::kPteDeterministic, same ? CheckStatus::kPass : CheckStatus::kFail,
                 prefix + (same ? "two runs give identical outputs" : "two runs on the same inputs gave different outputs")});
}

// Why the file is not handed to ExecuTorch's runtime, or "".
std::string NotHanded(const std::string& path, const std::vector<CheckResult>& out) {
  for (const CheckResult& c : out) {
    if (c.status == CheckStatus::kFail && c.id == check::kPteFormat) return "ExecuTorch is not given a file that fails pte.format";
  }
  const std::string id = PteIdentifier(path);
  if (id == "FT") return "an ExecuTorch data file (.ptd) holds tensors, not a program to run";
  if (!PteRuntimeBuilt()) return "this build has no ExecuTorch runtime (scripts/install_executorch_sdk.sh, then build again)";
  for (const CheckResult& c : out) {
    if (c.id == check::kPteData && c.status == CheckStatus::kWarn) {
      return "its tensors stored outside the program need --data FILE.ptd (pte.data)";
    }
    if (c.id == check::kPteData && c.status == CheckStatus::kFail) {
      return "ExecuTorch is not given a program whose external tensors are missing (pte.data)";
    }
  }
  return "";
}

// --reference and --reference-model for a .pte: NumPy's files, no bundle,
// and saved values in the format they are compared in.
void RequirePteReference(const ValidateOptions& options, bool bundled) {
  const bool file = !options.reference_path.empty(), model = !options.reference_model_path.empty();
  if (!file && !model) return;
  if (bundled) throw Error(ErrorKind::kUsage, "--reference and --reference-model do not apply to a bundled program: its cases carry their expected outputs");
  if (file && !IsNpzPath(options.reference_path) && !IsNpyPath(options.reference_path)) {
    throw Error(ErrorKind::kUsage, "an ExecuTorch program's --reference is NumPy's: an .npz (arr_0, arr_1, ...: one per "
                                   "output) or .npy (one tensor), not " + EscapeText(options.reference_path));
  }
  if (IsNpyPath(options.save_inputs_path) || IsNpyPath(options.save_outputs_path)) {
    throw Error(ErrorKind::kUsage, "with --reference or --reference-model, an ExecuTorch program's values are saved as .npz");
  }
}

// --save-inputs, --save-outputs: the files the runner sent, written whole
// (AtomicFile), or a FAIL saying why there is none.
void KeepSavedValues(const ValidateOptions& options, const PteRunOutcome& outcome, const json& r, std::vector<CheckResult>& out) {
  for (auto [path, bytes, flag] : {std::tuple{&options.save_inputs_path, &outcome.saved_inputs, "--save-inputs"},
                                   std::tuple{&options.save_outputs_path, &outcome.saved_outputs, "--save-outputs"}}) {
    if (path->empty()) continue;
    if (!bytes->empty()) {
      WriteFileAtomically(*path, *bytes);
      continue;
    }
    out.push_back({check::kPteRun, CheckStatus::kFail,
                   std::string(flag) + ": nothing saved (" + r.value("save_error", std::string("the method did not run")) + ")"});
  }
}

// What the runner is asked: the program (a .bpte: its test cases), its
// .ptd, inputs, tolerances and limits.
PteRunRequest PteRequest(const std::string& path, const ValidateOptions& options, const ArchiveReport& report) {
  PteRunRequest request = PteRunWithin(path, options);
  request.bundled = PteIdentifier(path) == "BP";
  if (request.bundled && !options.inputs.empty()) {
    throw Error(ErrorKind::kUsage, "--input does not apply to a bundled program: each test case carries its inputs");
  }
  request.rtol = options.rtol;
  request.atol = options.atol;
  RequirePteReference(options, request.bundled);
  for (auto [path_asked, format] : {std::pair{&options.save_inputs_path, &request.save_inputs},
                                    std::pair{&options.save_outputs_path, &request.save_outputs}}) {
    if (path_asked->empty()) continue;
    if (request.bundled) throw Error(ErrorKind::kUsage, "--save-inputs and --save-outputs do not apply to a bundled program");
    *format = IsNpzPath(*path_asked) ? "npz" : IsNpyPath(*path_asked) ? "npy" : "";
    if (format->empty()) {
      throw Error(ErrorKind::kUsage, "an ExecuTorch program's values are saved in NumPy's format: name the file .npz "
                                     "(every input or output) or .npy (one tensor), not " + EscapeText(*path_asked));
    }
  }
  // pte.reference compares the outputs, and B runs on the inputs, as .npz.
  if (!options.reference_path.empty() || !options.reference_model_path.empty()) {
    request.save_inputs = "npz";
    request.save_outputs = "npz";
  }
  for (const InputSpec& in : options.inputs) request.inputs.push_back(in.ToString());
  request.load_inputs = options.load_inputs_path;
  for (const ArgSpec& a : options.args) request.args.push_back(a.value);
  if (request.bundled && (!request.load_inputs.empty() || !request.args.empty())) {
    throw Error(ErrorKind::kUsage, "--load-inputs and --arg do not apply to a bundled program: each test case carries its inputs");
  }
  if (const json& d = Json(report.details); d.contains("pte_data")) request.data.push_back(d["pte_data"].get<std::string>());
  request.method = options.method == "all" || options.method == "forward" ? "" : options.method;
  request.run = options.run;
  return request;
}

}  // namespace

PteRunRequest PteRunWithin(const std::string& program, const ValidateOptions& options) {
  PteRunRequest request;
  request.program = program;
  request.timeout_seconds = options.timeout_seconds > 0 ? options.timeout_seconds : 60;
  request.memory_bytes = options.memory_limit_bytes ? options.memory_limit_bytes : DefaultChildMemoryLimit();
  request.sandbox = SandboxOn();
  return request;
}

void CheckPteRun(const std::string& path, const ValidateOptions& options, ArchiveReport& report, const ByteSource* src) {
  std::vector<CheckResult>& out = report.checks;
  if (!options.load) return;
  if (std::string why = NotHanded(path, out); !why.empty()) return Skip(out, why);
  RequirePteInputs(options.args, options.load_inputs_path, options.data_loader, options.inputs);
  PteRunRequest request = PteRequest(path, options, report);
  // The runtime reads the file validate checked, through its descriptor,
  // never the path again (a file swapped in between is not run); a stream
  // read into memory has none and is not handed over.
  if (src && src->Descriptor() >= 0) {
    request.program_fd = src->Descriptor();
  } else if (IsStream(path)) {
    return Skip(out, "a stream (" + EscapeText(path) + ") is read into memory, and the runtime reads a file: save it to a file first");
  }
  PteRunOutcome outcome = RunPteChild(request);
  ShowChildOutput(outcome.output, "tsctl: validate: " + EscapeText(path) + ": ExecuTorch: ");
  const std::string& log = outcome.output.kept();
  const RuntimeSaid said = ReadRuntimeLog(LogOf(log, ""));
  if (!outcome.stopped.empty() || outcome.result.empty()) {
    const std::string last = ReadRuntimeLog(log).last_error;
    CheckResult c{check::kPteRun, CheckStatus::kFail,
                  outcome.stopped.empty() ? "the ExecuTorch runtime " + outcome.died + (last.empty() ? "" : "; it said: " + last)
                                          : outcome.stopped + " (stopped before it ran)"};
    c.model_ran = true;
    out.push_back(c);
    return;
  }
  json r = json::parse(outcome.result, nullptr, false);
  if (r.is_discarded() || !r.is_object()) {
    out.push_back({check::kPteLoad, CheckStatus::kFail, "the ExecuTorch runner sent a result tsctl cannot read"});
    return;
  }
  if (r.contains("program_error") && !said.lacks.empty()) {
    out.push_back({check::kPteLoad, CheckStatus::kWarn,
                   "needs what this runtime (" + PteRuntimeVersion() + ") lacks: " + JoinAll(said.lacks, "; ") +
                       " (a runtime with it runs the program)"});
    return;
  }
  if (r.contains("program_error")) {
    out.push_back({check::kPteLoad, CheckStatus::kFail,
                   "ExecuTorch could not load the program: " + r["program_error"].get<std::string>() +
                       (said.last_error.empty() ? "" : "; the runtime said: " + said.last_error)});
    return;
  }
  const json& methods = r["methods"];
  if (methods.empty()) {
    out.push_back({check::kPteLoad, CheckStatus::kFail,
                   options.method.empty() || options.method == "all" || options.method == "forward"
                       ? "the program has no method"
                       : "the program has no method '" + options.method + "'"});
    return;
  }
  const size_t before = out.size();
  bool loaded_all = true;
  const std::string from = !options.load_inputs_path.empty() ? "--load-inputs " + EscapeText(options.load_inputs_path)
                           : std::string(options.inputs.empty() ? "" : "--input and ") + (options.args.empty() ? "" : "--arg and ") +
                                 "its metadata";
  for (const json& m : methods) {
    MethodRunChecks(m, log, from, out, loaded_all);
    if (m.contains("cases")) BundledCaseChecks(m, ReadRuntimeLog(LogOf(log, m.value("name", ""))).last_error, out);
  }
  if (!loaded_all) {
    // A method this runtime cannot load: the program did not run as a
    // whole, whatever its other methods did (NOT RUN, pte.load says why).
    for (size_t i = before; i < out.size(); ++i) out[i].model_ran = false;
  }
  if (loaded_all) {
    out.insert(out.begin() + static_cast<ptrdiff_t>(before),
               {check::kPteLoad, CheckStatus::kPass,
                "the program and " + std::to_string(methods.size()) + (methods.size() == 1 ? " method" : " methods") +
                    " loaded by " + PteRuntimeVersion()});
  }
  KeepSavedValues(options, outcome, r, out);
  if (!options.reference_path.empty() || !options.reference_model_path.empty()) CheckPteReference(options, outcome, out);
  Json(report.details)["pte_runtime"] = PteRuntimeVersion();
}

}  // namespace tsctl
