// validate's table of checks, assembled from its parts: the ZIP container's
// rows, each format's own (tsctl/format.h, Format::checks, in the order of
// Formats()), then the LibTorch run's; and what follows from it: ids,
// --skip, what blocks loading.
#include "check_table.h"

#include <algorithm>

#include "../commands/validate_internal.h"
#include "tsctl/error.h"
#include "tsctl/format.h"

namespace tsctl {

const std::vector<CheckRow>& CheckTable() {
  static const std::vector<CheckRow> kRows = [] {
    std::vector<CheckRow> rows = ZipCheckRows();
    for (const Format* f : Formats()) rows.insert(rows.end(), f->checks.begin(), f->checks.end());
    rows.insert(rows.end(), RunCheckRows().begin(), RunCheckRows().end());
    return rows;
  }();
  return kRows;
}

const CheckRow* CheckRowOf(std::string_view id) {
  for (const CheckRow& r : CheckTable()) {
    if (id == r.id) return &r;
  }
  return nullptr;
}

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

bool LeftOut(const ValidateOptions& options, std::initializer_list<const char*> ids) {
  for (const char* id : ids) {
    const CheckRow* row = CheckRowOf(id);
    if (!row || row->blocks_loading) return false;
    if (std::find(options.skip.begin(), options.skip.end(), id) == options.skip.end()) return false;
  }
  return true;
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
