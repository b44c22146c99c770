// The TorchScript rows of validate's table (tsctl/validate.h's CheckRow),
// in report order, each with its check; those on the records and pickles
// are in validate_zip.cc and validate_pickle.cc, ts.hooks in
// validate_hooks.cc, ts.mobile in validate_mobile.cc. None needs LibTorch.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../archive/json_input.h"
#include "check_context.h"
#include "tsctl/archive.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

using nlohmann::json;

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

// ts.kind: a ZIP that is no TorchScript archive stops here.
void CheckTsKind(CheckContext& c) {
  const ArchiveKind kind = c.archive->kind();
  if (kind != ArchiveKind::kTorchScript && kind != ArchiveKind::kTorchScriptLegacy) {
    c.Add({check::kTsKind, CheckStatus::kFail, NotTorchScript(kind)});
    c.stop = true;
    return;
  }
  c.Add({check::kTsKind, CheckStatus::kPass,
         kind == ArchiveKind::kTorchScriptLegacy ? "TorchScript archive (legacy model.json layout)" : "TorchScript archive"});
}

void CheckTsLayout(CheckContext& c) {
  const Archive& a = *c.archive;
  const bool legacy = a.kind() == ArchiveKind::kTorchScriptLegacy;
  c.Add({check::kTsLayout, legacy ? CheckStatus::kWarn : CheckStatus::kPass,
         legacy ? "legacy PyTorch 1.0 layout (model.json): newer LibTorch builds may refuse it; re-save it"
                : std::string("root folder '") + a.root() + "'" + (a.Has("bytecode.pkl") ? ", mobile bytecode.pkl present" : "")});
}

// meta.producer: --require-meta's keys in extra/producer_info.json.
void CheckMetaProducer(CheckContext& c) {
  const Archive& a = *c.archive;
  const std::vector<std::string>& keys = c.options.require_meta;
  std::vector<CheckResult>& out = c.report.checks;
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

// code.ops: --allow-ops over the operators the code (or bytecode.pkl)
// calls, without LibTorch (with loading, torch.ops judges LibTorch's list).
void CheckCodeOps(CheckContext& c) {
  if (c.options.load || !c.options.has_allow_ops) return;
  const OperatorList& ops = c.Facts<StaticOperators>().list;
  CheckAllowedOps(ops.Names(), c.options.allow_ops, check::kCodeOps,
                  " (read from the " + (ops.totals_source.empty() ? std::string("code") : ops.totals_source) + ", not loaded)",
                  c.report.checks);
}

}  // namespace

const std::vector<CheckRow>& TorchScriptCheckRows() {
  static const std::vector<CheckRow> kRows = {
      {.id = check::kTsKind, .blocks_loading = true, .check = CheckTsKind},
      {.id = check::kTsLayout, .check = CheckTsLayout},
      {.id = check::kTsRecords, .blocks_loading = true, .check = CheckTsRecords},
      {.id = check::kTsPickle, .blocks_loading = true, .check = CheckTsPickle},
      {.id = check::kTsGlobals, .check = CheckTsGlobals},
      {.id = check::kTsStorage, .blocks_loading = true, .check = CheckTsStorage},
      {.id = check::kTsDevice, .check = CheckTsDevice},
      {.id = check::kTsVersion, .check = CheckTsVersion},
      {.id = check::kTsAlignment, .check = CheckTsAlignment},
      {.id = check::kTsHooks, .blocks_loading = true, .check = CheckTsHooks},
      {.id = check::kTsMobile, .check = CheckTsMobile},
      {.id = check::kMetaProducer, .check = CheckMetaProducer, .judges_request = true},
      {.id = check::kCodeOps, .check = CheckCodeOps, .judges_request = true},
  };
  return kRows;
}

}  // namespace tsctl
