#include "tsctl/validate.h"

#include <fstream>
#include <optional>
#include <unistd.h>

#include "tsctl/archive.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "child.h"
#include "isolate.h"
#include "tsctl/operators.h"
#include "tsctl/stamp.h"
#include "tsctl/torch_backend.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

using nlohmann::json;

constexpr const char* kReferenceRecord = "tsctl_reference.pt";

void CheckMeta(const Archive& a, const std::vector<std::string>& keys, std::vector<CheckResult>& out) {
  if (keys.empty()) return;
  if (!a.Has("extra/producer_info.json")) {
    out.push_back({"meta.producer", CheckStatus::kFail, "extra/producer_info.json is missing (tsctl stamp adds it)"});
    return;
  }
  json j;
  try {
    j = json::parse(a.Read("extra/producer_info.json", 16 << 20));
  } catch (const std::exception& e) {
    out.push_back({"meta.producer", CheckStatus::kFail, std::string("extra/producer_info.json is not valid JSON: ") + e.what()});
    return;
  }
  std::vector<std::string> missing;
  for (const std::string& key : keys) {
    const json* at = &j;
    size_t start = 0;
    bool found = true;
    while (found) {
      size_t dot = key.find('.', start);
      std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (!at->is_object() || !at->contains(part)) {
        found = false;
        break;
      }
      at = &(*at)[part];
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (!found) missing.push_back(key);
  }
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  out.push_back({"meta.producer", missing.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 missing.empty() ? "extra/producer_info.json has every required key" : "extra/producer_info.json lacks: " + list});
}

// The --allow-ops check over `ops`, as check `id`.
void CheckAllowedOps(const std::vector<std::string>& ops, const std::vector<std::string>& allowed, const std::string& id,
                     const std::string& how, std::vector<CheckResult>& out) {
  const bool overload_known = id == "torch.ops";
  std::vector<std::string> bad;
  for (const auto& op : ops) {
    if (!OperatorAllowed(op, allowed, overload_known || op != OperatorBaseName(op))) bad.push_back(op);
  }
  std::string list;
  for (const auto& b : bad) list += (list.empty() ? "" : ", ") + b;
  out.push_back({id, bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 bad.empty() ? std::to_string(ops.size()) + " operators" + how + ", all allowed" : "operators not in the allowed list: " + list});
}

std::string SignalName(int sig) {
  const char* name = ::sigabbrev_np(sig);
  return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

// Turns the child's JSON (see check_model.cc) into checks.
void ChecksFromModel(const json& r, const ValidateOptions& options, ArchiveReport& report) {
  auto& out = report.checks;
  const json& load = r["load"];
  if (!load.value("ok", false)) {
    out.push_back({"torch.load", CheckStatus::kFail, "LibTorch cannot load it: " + load.value("error", std::string("unknown error"))});
    return;
  }
  out.push_back({"torch.load", CheckStatus::kPass, "loads in LibTorch on the CPU"});
  report.ops = r.value("ops", std::vector<std::string>{});
  if (!r.value("method_found", false)) {
    std::string have;
    for (const auto& m : r["methods"]) have += (have.empty() ? "" : ", ") + m.get<std::string>();
    out.push_back({"torch.method", CheckStatus::kFail, "no method '" + options.method + "' (methods: " + (have.empty() ? "none" : have) + ")"});
  } else {
    report.schema = r.value("schema", "");
    out.push_back({"torch.method", CheckStatus::kPass, report.schema});
  }
  if (options.has_allow_ops) CheckAllowedOps(report.ops, options.allow_ops, "torch.ops", "", out);
  if (!r.value("method_found", false)) return;
  const json& ref = r["reference"];
  if (!ref.value("error", std::string()).empty() && !ref.value("compared", false) && !r["run"].value("ran", false)) {
    // An unreadable reference stops the run: report it, never a silent pass.
    out.push_back({"torch.reference", CheckStatus::kFail, ref.value("error", std::string())});
    return;
  }
  const json& run = r["run"];
  if (!run.value("ran", false)) {
    if (run.value("error", std::string()).empty()) {
      out.push_back({"torch.run", CheckStatus::kSkip, run.value("skipped", std::string("not run"))});
    } else {
      out.push_back({"torch.run", CheckStatus::kFail, run.value("error", std::string())});
    }
    return;
  }
  std::string shapes;
  for (const auto& o : run["outputs"]) shapes += (shapes.empty() ? "" : ", ") + o.value("name", std::string()) + " " + o.value("desc", std::string());
  const std::string source = run.value("input_source", std::string());
  out.push_back({"torch.run", CheckStatus::kPass, (source.empty() ? "ran without inputs: " : "ran with inputs from " + source + ": ") + shapes});
  std::vector<std::string> nonfinite;
  for (const auto& o : run["outputs"]) {
    if (o.value("nonfinite", 0) > 0) nonfinite.push_back(o.value("name", std::string()) + " has " + std::to_string(o.value("nonfinite", 0)) + " NaN/Inf");
  }
  std::string nf;
  for (const auto& n : nonfinite) nf += (nf.empty() ? "" : "; ") + n;
  out.push_back({"torch.finite", nonfinite.empty() ? CheckStatus::kPass : CheckStatus::kFail, nonfinite.empty() ? "outputs contain no NaN or Inf" : nf});
  if (run.contains("deterministic") && !run["deterministic"].is_null()) {
    bool det = run["deterministic"].get<bool>();
    out.push_back({"torch.deterministic", det ? CheckStatus::kPass : CheckStatus::kFail,
                   det ? "two runs give identical outputs" : "two runs differ (max abs difference " + std::to_string(run.value("max_run_diff", 0.0)) + ")"});
  }
  if (ref.value("compared", false)) {
    bool all = true;
    std::string msg;
    for (const auto& o : ref["outputs"]) {
      all &= o.value("pass", false);
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s max abs %.3g, mean abs %.3g, max rel %.3g, mean rel %.3g (rtol %.3g, atol %.3g)%s",
                    o.value("name", std::string()).c_str(), o.value("max_abs", 0.0), o.value("mean_abs", 0.0),
                    o.value("max_rel", 0.0), o.value("mean_rel", 0.0), o.value("rtol", 0.0), o.value("atol", 0.0),
                    o.value("pass", false) ? "" : " FAILED");
      msg += (msg.empty() ? "" : "; ") + std::string(buf);
      if (!o.value("pass", false) && o.contains("min_atol")) {
        std::snprintf(buf, sizeof buf, " (would pass with --atol %.3g or --rtol %.3g)", o.value("min_atol", 0.0), o.value("min_rtol", 0.0));
        msg += buf;
      }
      if (o.contains("error")) msg += ": " + o.value("error", std::string());
    }
    out.push_back({"torch.reference", all ? CheckStatus::kPass : CheckStatus::kFail,
                   "against " + ref.value("source", std::string()) + ": " + msg});
  } else if (!ref.value("error", std::string()).empty()) {
    out.push_back({"torch.reference", CheckStatus::kFail, ref.value("error", std::string())});
  }
}

}  // namespace

const char* CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass: return "PASS";
    case CheckStatus::kWarn: return "WARN";
    case CheckStatus::kFail: return "FAIL";
    case CheckStatus::kSkip: return "SKIP";
  }
  return "?";
}

int ArchiveReport::Count(CheckStatus status) const {
  int n = 0;
  for (const auto& c : checks) n += c.status == status;
  return n;
}

bool ValidationReport::Passed() const {
  for (const auto& a : archives) {
    if (a.Count(CheckStatus::kFail) > 0 || (strict && a.Count(CheckStatus::kWarn) > 0)) return false;
  }
  return true;
}

std::vector<std::string> ReadOperatorList(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::kIo, "--allow-ops: cannot read " + path);
  std::vector<std::string> ops;
  std::string line;
  while (std::getline(in, line)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    ops.push_back(line.substr(b, e - b + 1));
  }
  return ops;
}

bool OperatorAllowed(const std::string& op, const std::vector<std::string>& allowed, bool overload_known) {
  std::string base = OperatorBaseName(op);
  for (const auto& a : allowed) {
    if (a == op || a == base) return true;
    if (!overload_known && base == op && OperatorBaseName(a) == op) return true;
  }
  return false;
}

ArchiveReport ValidateArchive(const std::string& path, const ValidateOptions& options) {
  std::unique_ptr<ByteSource> src = OpenFileSource(path);
  return ValidateSource(std::move(src), path, options);
}

ArchiveReport ValidateSource(std::unique_ptr<ByteSource> src, const std::string& path, const ValidateOptions& options) {
  ArchiveReport report;
  report.path = path;
  report.details = json::object();
  auto& out = report.checks;
  std::optional<Archive> archive;
  try {
    archive.emplace(Archive::OpenAny(std::move(src)));
  } catch (const Error& e) {
    out.push_back({"zip.structure", CheckStatus::kFail, e.what()});
    return report;
  }
  CheckZip(*archive, options, out);
  if (archive->kind() != ArchiveKind::kTorchScript && archive->kind() != ArchiveKind::kTorchScriptLegacy) {
    std::string what = archive->kind() == ArchiveKind::kTorchSave ? "a torch.save checkpoint, not a TorchScript archive"
                       : archive->kind() == ArchiveKind::kDamagedTorchScript ? "damaged TorchScript archive: data.pkl is missing"
                                                                            : "not a TorchScript archive (no data.pkl or model.json)";
    out.push_back({"ts.kind", CheckStatus::kFail, what});
    return report;
  }
  CheckStructure(*archive, out);
  CheckMeta(*archive, options.require_meta, out);
  if (!options.load) {
    // Without LibTorch: the operators the code (or bytecode.pkl) calls.
    OperatorList ops = ListOperators(*archive);
    report.ops = ops.Names();
    report.details["operators_source"] = ops.totals_source;
    if (options.has_allow_ops) {
      CheckAllowedOps(report.ops, options.allow_ops, "code.ops", " (read from the " + (ops.totals_source.empty() ? std::string("code") : ops.totals_source) + ", not loaded)", out);
    }
    return report;
  }
  // What tsctl itself finds unreadable or out of bounds is not handed to
  // LibTorch: a lying pickle or storage can make it allocate gigabytes or
  // read past a buffer.
  std::vector<std::string> refused;
  for (const CheckResult& c : out) {
    if (c.status == CheckStatus::kFail && (c.id == "ts.pickle" || c.id == "ts.records" || c.id == "ts.storage")) {
      refused.push_back(c.id);
    }
  }
  if (!refused.empty()) {
    std::string ids;
    for (const auto& r : refused) ids += (ids.empty() ? "" : ", ") + r;
    out.push_back({"torch.load", CheckStatus::kSkip, "not run: LibTorch is not given an archive that fails " + ids});
    return report;
  }

  // LibTorch work, in a child process.
  ModelCheckOptions m;
  m.path = path;
  m.load_libraries = options.load_libraries;
  m.method = options.method;
  m.run = options.run;
  m.rtol = options.rtol;
  m.atol = options.atol;
  m.reference_path = options.reference_path;
  m.reference_from_archive = options.reference_path.empty() && archive->Has(std::string("extra/") + kReferenceRecord);
  m.inputs = options.inputs;
  std::string input_source = options.inputs.empty() ? "" : "--input";
  if (m.inputs.empty() && !m.reference_from_archive && options.reference_path.empty()) {
    try {
      ArchiveInputs stored = InputsFromArchive(*archive, options.method);
      if (!stored.inputs.empty()) {
        m.inputs = stored.inputs;
        input_source = stored.source;
      }
    } catch (const Error&) {
    }
  }
  std::string reference_tmp;
  if (options.record_reference || !options.save_reference_path.empty()) {
    char tmpl[] = "/tmp/tsctl-reference-XXXXXX";
    int fd = ::mkstemp(tmpl);
    if (fd < 0) throw Error(ErrorKind::kIo, "cannot create a temporary file for --record-reference");
    ::close(fd);
    reference_tmp = tmpl;
    m.record_reference_path = reference_tmp;
  }
  WarmUpTorch();  // once per process: every archive's child is forked warm
  IsolatedResult iso = RunIsolated([&] { return LoadTorchPlugin().CheckModel(m); }, options.timeout_seconds);
  report.details["torch_seconds"] = iso.seconds;
  if (iso.timed_out) {
    out.push_back({"torch.load", CheckStatus::kFail, "LibTorch did not finish within " + std::to_string(static_cast<int>(options.timeout_seconds)) + " s (killed)"});
  } else if (iso.signal) {
    out.push_back({"torch.load", CheckStatus::kFail, "LibTorch crashed with " + SignalName(iso.signal) + " while loading or running it"});
  } else if (iso.exit_code) {
    out.push_back({"torch.load", CheckStatus::kFail, "the LibTorch process exited with code " + std::to_string(iso.exit_code)});
  } else if (!iso.ok) {
    // The plugin itself is unavailable: that is this machine's problem, not the archive's.
    throw Error(ErrorKind::kUnavailable, iso.error);
  } else {
    json r = json::parse(iso.output);
    if (r.contains("run") && r["run"].is_object() && r["run"].contains("input_source") && r["run"]["input_source"] == "inputs") {
      r["run"]["input_source"] = input_source;
    }
    report.details["model"] = r;
    ChecksFromModel(r, options, report);
    std::string bytes;
    if (!reference_tmp.empty() && r.value("recorded", false)) {
      std::ifstream in(reference_tmp, std::ios::binary);
      bytes.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
    if (!options.save_reference_path.empty() && !bytes.empty()) WriteFileAtomically(options.save_reference_path, bytes);
    if (options.record_reference && !bytes.empty()) {
      StampOptions s;
      s.auto_fields = false;
      s.files = {{kReferenceRecord, bytes}};
      Stamp(path, s);
      out.push_back({"torch.reference", CheckStatus::kPass, std::string("recorded inputs and outputs in extra/") + kReferenceRecord});
    } else if (!reference_tmp.empty() && bytes.empty()) {
      out.push_back({"torch.reference", CheckStatus::kFail, "nothing to record: the method did not run (pass --input)"});
    }
  }
  if (!reference_tmp.empty()) ::unlink(reference_tmp.c_str());
  return report;
}

}  // namespace tsctl
