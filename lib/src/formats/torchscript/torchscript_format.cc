// TorchScript archives (torch.jit.save's ZIP; the legacy model.json layout of
// PyTorch 1.0): their row of tsctl/format.h. TorchScript is the ZIP format
// every ZIP that is no other format's is judged as (validate's ts.kind says
// what it is instead).
#include <memory>

#include "../../commands/apply_inputs.h"
#include "../../commands/check_before_load.h"
#include "../../commands/validate_internal.h"
#include "../../archive/json_input.h"
#include "../../text/json_util.h"
#include "../check_table.h"
#include "../../commands/zip_model.h"
#include "../zip_formats.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/format.h"
#include "tsctl/inputs.h"
#include "tsctl/inspect.h"
#include "tsctl/operators.h"
#include "tsctl/report.h"
#include "tsctl/torch_backend.h"

namespace tsctl {
namespace {

using nlohmann::json;

std::string TorchScriptGraph(const OpenedFile&, const GraphOptions& options, OutputFormat) { return Graph(options); }

std::string TorchScriptCode(const OpenedFile& file, const CodeQuery& query) { return StoredCode(SoundArchive(file), query); }

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

// validate: the TorchScript checks after the ZIP's, then LibTorch's (a child).
void TorchScriptValidate(const ValidateRequest& request, ArchiveReport& report) {
  Archive& archive = *request.archive;
  const ValidateOptions& options = request.options;
  const std::string& path = request.path;
  auto& out = report.checks;
  if (archive.kind() != ArchiveKind::kTorchScript && archive.kind() != ArchiveKind::kTorchScriptLegacy) {
    out.push_back({check::kTsKind, CheckStatus::kFail, NotTorchScript(archive.kind())});
    return;
  }
  TimedStep(out, [&] { CheckStructure(archive, out); });
  bool loadable = true;
  TimedStep(out, [&] { loadable = CheckLoadHooks(archive, options, out); });
  if (!LeftOut(options, {check::kMetaProducer})) TimedStep(out, [&] { CheckMeta(archive, options.require_meta, out); });
  if (LooksMobile(archive, path) && !LeftOut(options, {check::kTsMobile})) {
    TimedStep(out, [&] { CheckMobile(archive, path, out); });
  }
  if (!options.load) {
    // Without LibTorch: the operators the code (or bytecode.pkl) calls.
    OperatorList ops = ListOperators(archive);
    report.ops = ops.Names();
    Json(report.details)["operators_source"] = ops.totals_source;
    if (options.has_allow_ops) {
      CheckAllowedOps(
          report.ops, options.allow_ops, check::kCodeOps,
          " (read from the " + (ops.totals_source.empty() ? std::string("code") : ops.totals_source) + ", not loaded)",
          out);
    }
    return;
  }
  if (std::string refused = RefusedBy(out, loadable); !refused.empty()) {
    out.push_back(
        {check::kTorchLoad, CheckStatus::kSkip, "not run: LibTorch is not given an archive that fails " + refused});
    return;
  }
  // LibTorch work, in a child process.
  std::shared_ptr<TempFile> inputs_file;
  ModelCheckOptions m = ModelCheckOf(archive, path, options, inputs_file);
  TimedStep(out, [&] { CheckModelInChild(archive, path, options, m, report); });
  JudgeCudaPinning(options.device, out);
}

}  // namespace

extern const Format kTorchScriptFormat;
const Format kTorchScriptFormat = {
    .name = "torchscript",
    .extensions = {},
    .zip = &kTorchScriptModel,
    .inspect = InspectZipArchive,
    .graph = TorchScriptGraph,
    .stored_code = TorchScriptCode,
    .report_page = ZipArchivePage,
    .checks = {{check::kTsKind},
               {check::kTsLayout},
               {check::kTsRecords, true},
               {check::kTsPickle, true},
               {check::kTsGlobals},
               {check::kTsStorage, true},
               {check::kTsDevice},
               {check::kTsVersion},
               {check::kTsAlignment},
               {check::kTsHooks, true},
               {check::kTsMobile},
               {check::kMetaProducer},
               {check::kCodeOps}},
    .validate = TorchScriptValidate,
    .compat = TorchScriptNeeds,
};

}  // namespace tsctl
