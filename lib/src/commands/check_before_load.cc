// CheckBeforeLoad: validate's static checks, run by every command before it
// gives an archive to LibTorch (check_before_load.h).
#include "check_before_load.h"

#include <algorithm>

#include "tsctl/error.h"
#include "plugin_abi.h"
#include "torch_child.h"
#include "check_context.h"
#include "validate_internal.h"
#include "zip_model.h"

namespace tsctl {

bool RefusesLoad(const CheckResult& c) {
  if (c.status != CheckStatus::kFail) return false;
  auto refuses = [&c](const std::vector<CheckRow>& rows) {
    return std::any_of(rows.begin(), rows.end(),
                       [&c](const CheckRow& r) { return c.id == r.id && r.check && !r.judges_request; });
  };
  if (refuses(ZipCheckRows())) return true;
  return std::any_of(ZipModels().begin(), ZipModels().end(), [&](const ZipModel* m) { return refuses(m->checks()); });
}

std::optional<LoadRefusal> CheckBeforeLoad(const Archive& archive, const std::string& path, bool allow_load_hooks) {
  ValidateOptions options;  // validate's defaults: its limits, no --allow-ops, nothing loaded
  options.load = false;
  options.run = false;
  options.allow_load_hooks = allow_load_hooks;
  ArchiveReport report;
  report.path = path;
  std::vector<CheckResult>& out = report.checks;
  CheckContext context(path, options, report);
  context.archive = &archive;
  RunRows(ZipCheckRows(), context);
  RunRows(ZipModelOf(archive).checks(), context);
  LoadRefusal refusal;
  for (const CheckResult& c : out) {
    if (RefusesLoad(c)) refusal.failed.push_back(c);
  }
  if (refusal.failed.empty()) return std::nullopt;
  std::string ids, found;
  for (const CheckResult& c : refusal.failed) {
    ids += (ids.empty() ? "" : ", ") + c.id;
    found += (found.empty() ? "" : "; ") + (refusal.failed.size() > 1 ? c.id + ": " : "") + c.message;
  }
  refusal.message = "LibTorch is not given an archive that fails " + ids + ": " + found;
  return refusal;
}

std::string CheckedLoadPath(const Archive& archive) {
  const int fd = archive.source().Descriptor();
  return fd >= 0 ? "/proc/self/fd/" + std::to_string(fd) : "";
}

std::string CheckForLibTorch(const Archive& archive, const std::string& path, bool allow_load_hooks) {
  try {
    // ts.version reads the range of the LibTorch in use, as validate's does.
    WarmUpTorch();
  } catch (const Error&) {
  }
  RequireLoadable(archive, path, allow_load_hooks);
  return CheckedLoadPath(archive);
}

void RequireLoadable(const Archive& archive, const std::string& path, bool allow_load_hooks) {
  if (std::optional<LoadRefusal> refused = CheckBeforeLoad(archive, path, allow_load_hooks)) {
    throw Error(ErrorKind::kRefused, refused->message);
  }
}

}  // namespace tsctl
