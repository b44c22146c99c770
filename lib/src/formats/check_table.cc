// validate's table of checks, assembled from its parts: the ZIP container's
// rows, each format's own (tsctl/format.h, Format::checks, in the order of
// Formats()), then the LibTorch run's; and what follows from it: ids,
// --skip, what blocks loading. The rows run in lib/src/commands/ (RunRows).
#include "check_table.h"

#include <algorithm>

#include "../commands/validate_internal.h"
#include "tsctl/error.h"
#include "tsctl/format.h"

namespace tsctl {

const std::vector<CheckRow>& CheckTable() {
  static const std::vector<CheckRow> kRows = [] {
    std::vector<CheckRow> rows;
    // An id two formats report (code.ops) is one row, where it first comes.
    auto add = [&rows](const std::vector<CheckRow>& more) {
      for (const CheckRow& r : more) {
        if (!CheckRowOf(rows, r.id)) rows.push_back(r);
      }
    };
    add(ZipCheckRows());
    for (const Format* f : Formats()) add(f->checks);
    add(RunCheckRows());
    return rows;
  }();
  return kRows;
}

const CheckRow* CheckRowOf(const std::vector<CheckRow>& rows, std::string_view id) {
  for (const CheckRow& r : rows) {
    if (id == r.id) return &r;
  }
  return nullptr;
}

const CheckRow* CheckRowOf(std::string_view id) { return CheckRowOf(CheckTable(), id); }

const std::vector<std::string>& CheckIds() {
  static const std::vector<std::string> kIds = [] {
    std::vector<std::string> ids;
    for (const CheckRow& r : CheckTable()) ids.push_back(r.id);
    return ids;
  }();
  return kIds;
}

void RequireCheckId(const std::string& id, const std::string& flag) {
  const auto& ids = CheckIds();
  if (std::find(ids.begin(), ids.end(), id) != ids.end()) return;
  std::string all;
  for (const std::string& k : ids) all += (all.empty() ? "" : ", ") + k;
  throw Error(ErrorKind::kUsage, flag + ": '" + id + "' is not a check; the checks are " + all);
}

void ApplySkip(const std::vector<std::string>& skip, std::vector<CheckResult>& out) {
  for (const std::string& id : skip) {
    bool seen = false;
    for (CheckResult& c : out) {
      if (c.id != id) continue;
      c.status = CheckStatus::kSkip;
      c.message = "skipped by --skip";
      seen = true;
    }
    if (!seen) out.push_back({id, CheckStatus::kSkip, "skipped by --skip"});
  }
}

}  // namespace tsctl
