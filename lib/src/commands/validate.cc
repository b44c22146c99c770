#include "tsctl/validate.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <unistd.h>

#include "../text/json_util.h"
#include "tsctl/archive.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "../archive/json_input.h"
#include "apply_inputs.h"
#include "check_before_load.h"
#include "tsctl/operators.h"
#include "tsctl/stamp.h"
#include "tsctl/torch_backend.h"
#include "torch_child.h"
#include "tsctl/pte.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

using nlohmann::json;

void CheckMeta(const Archive& a, const std::vector<std::string>& keys, std::vector<CheckResult>& out) {
  if (keys.empty()) return;
  if (!a.Has("extra/producer_info.json")) {
    out.push_back(
        {check::kMetaProducer, CheckStatus::kFail, "extra/producer_info.json is missing (tsctl stamp adds it)"});
    return;
  }
  json j;
  try {
    j = ParseJsonInput(a.Read("extra/producer_info.json", 16 << 20), "extra/producer_info.json");
  } catch (const std::exception& e) {
    out.push_back({check::kMetaProducer, CheckStatus::kFail, e.what()});
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
  out.push_back({check::kMetaProducer, missing.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 missing.empty() ? "extra/producer_info.json has every required key"
                                 : "extra/producer_info.json lacks: " + list});
}

}  // namespace

void CheckAllowedOps(const std::vector<std::string>& ops, const std::vector<std::string>& allowed, const std::string& id,
                     const std::string& how, std::vector<CheckResult>& out) {
  const bool overload_known = id == check::kTorchOps;
  std::vector<std::string> bad;
  for (const auto& op : ops) {
    if (!OperatorAllowed(op, allowed, overload_known || op != OperatorBaseName(op))) bad.push_back(op);
  }
  std::string list;
  for (const auto& b : bad) list += (list.empty() ? "" : ", ") + b;
  out.push_back({id, bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 bad.empty() ? std::to_string(ops.size()) + " operators" + how + ", all allowed" : "operators not in the allowed list: " + list});
}


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

const char* ArchiveResultName(ArchiveResult result) {
  switch (result) {
    case ArchiveResult::kPassed: return "PASSED";
    case ArchiveResult::kFailed: return "FAILED";
    case ArchiveResult::kNotRun: return "NOT RUN";
  }
  return "?";
}

ArchiveResult ArchiveReport::Result(bool strict) const {
  if (Count(CheckStatus::kFail) > 0 || (strict && Count(CheckStatus::kWarn) > 0)) return ArchiveResult::kFailed;
  return not_run.empty() ? ArchiveResult::kPassed : ArchiveResult::kNotRun;
}

ArchiveResult ValidationReport::Result() const {
  if (!not_checked.empty()) return ArchiveResult::kFailed;  // nothing checked is never a pass
  ArchiveResult result = ArchiveResult::kPassed;
  for (const auto& a : archives) {
    const ArchiveResult r = a.Result(strict);
    if (r == ArchiveResult::kFailed) return r;
    if (r == ArchiveResult::kNotRun) result = r;
  }
  return result;
}

bool ValidationReport::Passed() const {
  const ArchiveResult r = Result();
  return r == ArchiveResult::kPassed || (r == ArchiveResult::kNotRun && allow_not_run);
}

std::vector<std::string> ReadOperatorList(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::kIo, "--allow-ops: cannot read " + path + ": " + std::strerror(errno));
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
  // LibTorch loads by path: a stream read here would be gone by then.
  const bool load =
      options.load && std::find(options.skip.begin(), options.skip.end(), check::kTorchLoad) == options.skip.end();
  if (load) RequireRegularFile(path, "LibTorch loads", "(or pass --no-load)");
  std::unique_ptr<ByteSource> src = OpenFileSource(path);
  return ValidateSource(std::move(src), path, options);
}

ModelCheckOptions ModelCheckBase(const Archive& archive, const std::string& path, const ValidateOptions& options) {
  ModelCheckOptions m;
  static_cast<RunSpec&>(m) = options;
  m.path = path;
  // LibTorch opens the file tsctl just checked (the descriptor, inherited by
  // the child), not whatever the path names by then.
  m.load_path = CheckedLoadPath(archive);
  m.run = options.run;
  m.rtol = options.rtol;
  m.atol = options.atol;
  m.reference_path = options.reference_path;
  ChooseCalls(options, m);
  return m;
}

namespace {

// ts.kind of a file that is neither TorchScript nor .pt2.
std::string NotTorchScript(ArchiveKind kind) {
  switch (kind) {
    case ArchiveKind::kTorchSave: return "a torch.save checkpoint, not a TorchScript archive";
    case ArchiveKind::kDamagedTorchScript: return "damaged TorchScript archive: data.pkl is missing";
    case ArchiveKind::kDamagedPt2:
      return "damaged .pt2 archive: archive_format says pt2 but it has neither models/*.json nor data/aotinductor/";
    default: return "not a TorchScript archive (no data.pkl or model.json)";
  }
}

// What tsctl itself finds unreadable or out of bounds is not handed to
// LibTorch (a lying pickle or storage can make it allocate gigabytes or read
// past a buffer): the failed checks that keep it from loading.
std::string RefusedBy(const std::vector<CheckResult>& out, bool loadable) {
  std::string ids;
  for (const CheckResult& c : out) {
    const CheckRow* row = CheckRowOf(c.id);
    if (c.status == CheckStatus::kFail && row && row->blocks_loading && c.id != check::kTsHooks) {
      ids += (ids.empty() ? "" : ", ") + c.id;
    }
  }
  // ts.hooks says itself whether the archive may load (a FAIL; a WARN under
  // --allow-load-hooks), and is named last.
  if (!loadable) ids += (ids.empty() ? "" : ", ") + std::string(check::kTsHooks);
  return ids;
}

// The model check's options as validate's flags set them, with the inputs
// ResolveInputs finds (`inputs_file` keeps a file it wrote alive).
ModelCheckOptions ModelCheckOf(const Archive& archive, const std::string& path, const ValidateOptions& options,
                               std::shared_ptr<TempFile>& inputs_file) {
  ModelCheckOptions m = ModelCheckBase(archive, path, options);
  m.reference_from_archive = options.reference_path.empty() && archive.Has(kReferenceRecordPath);
  // The lite interpreter is tried on what has bytecode; a .ptl without it has
  // its one WARN from ts.mobile already (the child would only add "file not
  // found" for the same cause).
  m.check_mobile = archive.Has("bytecode.pkl");
  m.ranges_for_any_method = options.method == "all";
  if (!options.run) return m;
  // The reference (given, or the archive's record) holds the inputs it was made on.
  const std::string reference = m.reference_from_archive ? kReferenceRecordPath : options.reference_path;
  ResolvedInputs in = ResolveInputs(archive, options, {.reference_path = reference, .key = options.method == "all" ? "" : options.method});
  ApplyResolved(in, m);
  if (m.reference_from_archive && in.origin == InputOrigin::kReference) {
    if (std::string origin = RecordedInputsOrigin(archive); !origin.empty()) m.input_source += ", " + origin;
  }
  inputs_file = in.temp;
  return m;
}

ArchiveReport AllChecks(std::unique_ptr<ByteSource> src, const std::string& path, const ValidateOptions& options) {
  ArchiveReport report;
  report.path = path;
  Json(report.details) = json::object();
  auto& out = report.checks;
  // An ExecuTorch file is read by its own reader, never as a damaged ZIP.
  if (src->Size() >= kPteHeadBytes && LooksLikePte(src->ReadString(0, kPteHeadBytes))) {
    TimedStep(out, [&] { CheckPte(path, options, report); });
    return report;
  }
  if (options.load) {
    // Start the LibTorch server up front (once per process; the children
    // are forked from it) so that ts.version reports the range of the
    // LibTorch in use for every archive alike. A plugin that cannot load is reported when
    // the archive would be handed to it.
    try {
      WarmUpTorch();
    } catch (const Error&) {
    }
  }
  std::optional<Archive> archive;
  try {
    archive.emplace(Archive::OpenAny(std::move(src)));
  } catch (const Error& e) {
    out.push_back({check::kZipStructure, CheckStatus::kFail, e.what()});
    return report;
  }
  TimedStep(out, [&] { CheckZip(*archive, options, out); });
  if (IsPt2(archive->kind())) {
    TimedStep(out, [&] { CheckPt2(*archive, options, report); });
    return report;
  }
  if (archive->kind() != ArchiveKind::kTorchScript && archive->kind() != ArchiveKind::kTorchScriptLegacy) {
    out.push_back({check::kTsKind, CheckStatus::kFail, NotTorchScript(archive->kind())});
    return report;
  }
  TimedStep(out, [&] { CheckStructure(*archive, out); });
  bool loadable = true;
  TimedStep(out, [&] { loadable = CheckLoadHooks(*archive, options, out); });
  if (!LeftOut(options, {check::kMetaProducer})) TimedStep(out, [&] { CheckMeta(*archive, options.require_meta, out); });
  if (LooksMobile(*archive, path) && !LeftOut(options, {check::kTsMobile})) {
    TimedStep(out, [&] { CheckMobile(*archive, path, out); });
  }
  if (!options.load) {
    // Without LibTorch: the operators the code (or bytecode.pkl) calls.
    OperatorList ops = ListOperators(*archive);
    report.ops = ops.Names();
    Json(report.details)["operators_source"] = ops.totals_source;
    if (options.has_allow_ops) {
      CheckAllowedOps(
          report.ops, options.allow_ops, check::kCodeOps,
          " (read from the " + (ops.totals_source.empty() ? std::string("code") : ops.totals_source) + ", not loaded)",
          out);
    }
    return report;
  }
  if (std::string refused = RefusedBy(out, loadable); !refused.empty()) {
    out.push_back(
        {check::kTorchLoad, CheckStatus::kSkip, "not run: LibTorch is not given an archive that fails " + refused});
    return report;
  }
  // LibTorch work, in a child process.
  std::shared_ptr<TempFile> inputs_file;
  ModelCheckOptions m = ModelCheckOf(*archive, path, options, inputs_file);
  TimedStep(out, [&] { CheckModelInChild(*archive, path, options, m, report); });
  JudgeCudaPinning(options.device, out);
  return report;
}

// NOT RUN: the model was to be loaded and run (no --no-load, --no-run or
// --skip asked otherwise) and no check says it ran (CheckResult::model_ran:
// a run on given, stored or cleanly inferred inputs, or a run that failed).
// Why: what the last torch.load, torch.method or torch.run check that is
// not a PASS says
// (its id in `from`), the format's own word where there is none (an
// ExecuTorch program, which this build reads but does not run); "" when it ran.
std::string WhyNotRun(const std::vector<CheckResult>& checks, std::string& from) {
  std::string why;
  from.clear();
  for (const CheckResult& c : checks) {
    if (c.model_ran) {
      from.clear();
      return "";
    }
    if ((c.id == check::kTorchLoad || c.id == check::kTorchMethod || c.id == check::kTorchRun) &&
        c.status != CheckStatus::kPass) {
      why = c.message;
      from = c.id;
    }
  }
  constexpr std::string_view kSaid = "not run: ";  // the result says NOT RUN already
  if (why.rfind(kSaid, 0) == 0) why.erase(0, kSaid.size());
  if (!why.empty()) return why;
  const bool pte = std::any_of(checks.begin(), checks.end(), [](const CheckResult& c) { return c.id.rfind("pte.", 0) == 0; });
  return pte ? "an ExecuTorch program: this build reads it and checks it statically, it does not run it"
             : "the model was not loaded or run";
}

}  // namespace

double ValidateTimeout(uint64_t bytes) {
  constexpr double kFixed = 60, kPerGiB = 60;
  return std::ceil(kFixed + kPerGiB * static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
}

ArchiveReport ValidateSource(std::unique_ptr<ByteSource> src, const std::string& path, const ValidateOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ValidateOptions o = options;
  if (o.timeout_seconds <= 0) o.timeout_seconds = ValidateTimeout(src->Size());
  auto skipped = [&](const char* id) { return std::find(o.skip.begin(), o.skip.end(), id) != o.skip.end(); };
  if (skipped(check::kTorchLoad)) o.load = false;
  if (skipped(check::kTorchRun)) o.run = false;
  ArchiveReport report = AllChecks(std::move(src), path, o);
  ApplySkip(o.skip, report.checks);
  if (o.load && o.run) report.not_run = WhyNotRun(report.checks, report.not_run_check);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace tsctl
