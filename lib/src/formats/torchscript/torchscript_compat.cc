// What torch.jit.load needs to load a TorchScript archive (tsctl compat), read
// without LibTorch: the `version` record (the file format the loader checks
// against its supported range), the operators its code calls (by name: the
// compiler picks overloads from types; a mobile archive without code: its
// bytecode's, with overloads), the custom classes its pickles create
// (GLOBAL '__torch__.torch.classes.NS NAME'), and where its tensors were
// stored.
#include <set>

#include "../../commands/check_context.h"
#include "../check_table.h"
#include "../../commands/validate_internal.h"
#include "../zip_formats.h"
#include "tsctl/compat.h"
#include "tsctl/error.h"
#include "tsctl/format.h"
#include "tsctl/inspect.h"
#include "tsctl/pickle.h"

namespace tsctl {
namespace {

constexpr char kClassPrefix[] = "__torch__.torch.classes.";

void AddClasses(const Archive& a, const std::string& record, std::set<std::string>& classes, CompatNeeds& n) {
  if (!a.Has(record)) return;
  try {
    PickleFacts facts;
    ParsePickle(a.Read(record), {}, &facts);
    for (const std::string& g : facts.globals) {
      if (g.rfind(kClassPrefix, 0) == 0) classes.insert(g.substr(sizeof kClassPrefix - 1));
    }
  } catch (const Error& e) {
    n.notes.push_back(record + " could not be read for the custom classes it creates: " + e.what());
  }
}

}  // namespace

void AddZipDamage(const Archive& archive, CompatNeeds& needs) {
  ArchiveReport report;
  const ValidateOptions options;
  CheckContext context("", options, report);
  context.archive = &archive;
  // The records PyTorchStreamReader and Python's zipfile refuse to read:
  // these rows' checks alone.
  std::vector<const char*> ids = {check::kZipCrc, check::kZipSizes};
  if (!IsPt2(archive.kind())) ids.push_back(check::kTsRecords);
  for (const char* id : ids) CheckRowOf(id)->check(context);
  for (const CheckResult& c : report.checks) {
    if (c.status == CheckStatus::kFail) needs.damage.push_back(c.id + ": " + c.message);
  }
}

CompatNeeds TorchScriptNeeds(const OpenedFile& file) {
  const Archive& a = SoundArchive(file);
  const ArchiveInfo info = Inspect(a);
  CompatNeeds n;
  n.format = info.format.has_bytecode ? "TorchScript archive (mobile)" : "TorchScript archive";
  n.runtime = "torch";
  if (info.format.version && *info.format.version >= 0) n.file_format = static_cast<uint64_t>(*info.format.version);
  if (info.format.bytecode_version && *info.format.bytecode_version >= 0) {
    n.bytecode = static_cast<uint64_t>(*info.format.bytecode_version);
  }
  n.legacy = info.format.legacy;
  std::set<std::string> ops;
  for (const MethodOperators& m : info.operators.methods) {
    if (m.source != "code") continue;
    for (const OperatorUse& u : m.operators) ops.insert(u.name);
  }
  if (ops.empty() && info.operators.totals_source == "bytecode") {
    for (const OperatorUse& u : info.operators.totals) ops.insert(u.name);
    n.overloads_known = true;
  }
  n.operators.assign(ops.begin(), ops.end());
  if (info.operators.unscanned) {
    n.notes.push_back(std::to_string(info.operators.unscanned) + " code record(s) too large to scan for operators");
  }
  std::set<std::string> devices, classes;
  for (const TotalInfo& t : info.totals) {
    if (!t.device.empty() && t.device != "cpu") devices.insert(t.device);
  }
  n.devices.assign(devices.begin(), devices.end());
  AddClasses(a, "data.pkl", classes, n);
  AddClasses(a, "constants.pkl", classes, n);
  n.classes.assign(classes.begin(), classes.end());
  AddZipDamage(a, n);
  return n;
}

}  // namespace tsctl
