// What validate knows of its checks as a whole: their ids (for --skip), the
// time each step took (for JUnit), and --skip applied to a finished report.
#include <algorithm>
#include <chrono>

#include "tsctl/error.h"
#include "validate_internal.h"

namespace tsctl {

const std::vector<CheckRow>& CheckTable() {
  // Report order; tsctl-validate(1) and validate.md document each (ctest
  // unit: "validate: the docs list every check of the table").
  using F = CheckFormats;
  static const std::vector<CheckRow> kRows = {
      {check::kZipStructure, F::kAnyZip, false},
      {check::kZipNames, F::kAnyZip, false},
      {check::kZipDuplicates, F::kAnyZip, false},
      {check::kZipAmbiguous, F::kAnyZip, false},
      {check::kZipOverlap, F::kAnyZip, false},
      {check::kZipCompression, F::kAnyZip, false},
      {check::kZipBomb, F::kAnyZip, false},
      {check::kZipCrc, F::kAnyZip, false},
      {check::kZipSizes, F::kAnyZip, false},
      {check::kTsKind, F::kTorchScript, false},
      {check::kTsLayout, F::kTorchScript, false},
      {check::kTsRecords, F::kTorchScript, true},
      {check::kTsPickle, F::kTorchScript, true},
      {check::kTsGlobals, F::kTorchScript, false},
      {check::kTsStorage, F::kTorchScript, true},
      {check::kTsDevice, F::kTorchScript, false},
      {check::kTsVersion, F::kTorchScript, false},
      {check::kTsAlignment, F::kTorchScript, false},
      {check::kTsHooks, F::kTorchScript, true},
      {check::kTsMobile, F::kTorchScript, false},
      {check::kMetaProducer, F::kTorchScript, false},
      {check::kCodeOps, F::kTorchScript, false},
      {check::kPt2Kind, F::kPt2, false},
      {check::kPt2Version, F::kPt2, false},
      {check::kPt2Program, F::kPt2, false},
      {check::kPt2Weights, F::kPt2, false},
      {check::kPt2Aoti, F::kPt2, false},
      {check::kPt2Ops, F::kPt2, false},
      {check::kPteFormat, F::kPte, false},
      {check::kPteData, F::kPte, false},
      {check::kPteKernels, F::kPte, false},
      {check::kPteDelegates, F::kPte, false},
      {check::kPteBundled, F::kPte, false},
      {check::kTorchSandbox, F::kRun, false},
      {check::kTorchLoad, F::kRun, false},
      {check::kTorchUnsafe, F::kRun, false},
      {check::kTsBytecode, F::kRun, false},
      {check::kTorchMethod, F::kRun, false},
      {check::kTorchOps, F::kRun, false},
      {check::kTorchMobile, F::kRun, false},
      {check::kTorchRun, F::kRun, false},
      {check::kTorchOutputs, F::kRun, false},
      {check::kTorchFinite, F::kRun, false},
      {check::kTorchDeterministic, F::kRun, false},
      {check::kTorchStateful, F::kRun, false},
      {check::kTorchReference, F::kRun, false},
      {check::kTorchIntermediates, F::kRun, false},
  };
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

void TimedStep(std::vector<CheckResult>& out, const std::function<void()>& step) {
  const size_t before = out.size();
  const double start = CheckResult::Now();
  step();
  const double end = CheckResult::Now();
  // Each check's time is measured: from the previous check's result (or the
  // step's start) to its own; what the step did after its last result counts
  // on that one, so the step's checks add up to its time.
  double previous = start;
  for (size_t i = before; i < out.size(); ++i) {
    const double made = std::min(std::max(out[i].made_at, previous), end);
    out[i].seconds = made - previous;
    previous = made;
  }
  if (out.size() > before) out.back().seconds += end - previous;
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
