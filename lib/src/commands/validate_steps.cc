// What validate knows of its checks as a whole: their ids (for --skip), the
// time each step took (for JUnit), and --skip applied to a finished report.
#include <algorithm>
#include <chrono>

#include "tsctl/error.h"
#include "validate_internal.h"

namespace tsctl {

const std::vector<std::string>& CheckIds() {
  // Report order; tsctl-validate(1) documents each.
  static const std::vector<std::string> kIds = {
      "zip.structure",   "zip.names",           "zip.duplicates",  "zip.ambiguous",      "zip.overlap",   "zip.compression",
      "zip.bomb",        "zip.crc",             "zip.sizes",       "ts.kind",            "ts.layout",     "ts.records",
      "ts.pickle",       "ts.globals",          "ts.storage",      "ts.device",          "ts.version",    "ts.alignment",
      "ts.hooks",        "ts.mobile",           "meta.producer",   "code.ops",           "pt2.kind",      "pt2.version",
      "pt2.program",     "pt2.weights",         "pt2.aoti",        "pt2.ops",            "torch.sandbox", "torch.load",
      "torch.unsafe",    "ts.bytecode",         "torch.method",    "torch.ops",          "torch.mobile",  "torch.run",
      "torch.outputs",   "torch.finite",        "torch.deterministic", "torch.reference", "torch.intermediates"};
  return kIds;
}

void RequireCheckId(const std::string& id, const std::string& flag) {
  const auto& ids = CheckIds();
  if (std::find(ids.begin(), ids.end(), id) != ids.end()) return;
  std::string all;
  for (const std::string& k : ids) all += (all.empty() ? "" : ", ") + k;
  throw Error(ErrorKind::kUsage, flag + ": '" + id + "' is not a check; the checks are " + all);
}

void TimedStep(std::vector<CheckResult>& out, const std::function<void()>& step) {
  const size_t before = out.size();
  const auto start = std::chrono::steady_clock::now();
  step();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (out.size() <= before) return;
  const double each = seconds / static_cast<double>(out.size() - before);
  for (size_t i = before; i < out.size(); ++i) out[i].seconds = each;
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
