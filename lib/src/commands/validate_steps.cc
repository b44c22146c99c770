// What validate knows of its checks as a whole: their ids (for --skip), the
// time each step took (for JUnit), and --skip applied to a finished report.
#include <algorithm>
#include <chrono>

#include "tsctl/error.h"
#include "validate_internal.h"

namespace tsctl {

const std::vector<std::string>& CheckIds() {
  // Report order; tsctl-validate(1) documents each.
  static const std::vector<std::string> kIds = {check::kZipStructure,
                                                check::kZipNames,
                                                check::kZipDuplicates,
                                                check::kZipAmbiguous,
                                                check::kZipOverlap,
                                                check::kZipCompression,
                                                check::kZipBomb,
                                                check::kZipCrc,
                                                check::kZipSizes,
                                                check::kTsKind,
                                                check::kTsLayout,
                                                check::kTsRecords,
                                                check::kTsPickle,
                                                check::kTsGlobals,
                                                check::kTsStorage,
                                                check::kTsDevice,
                                                check::kTsVersion,
                                                check::kTsAlignment,
                                                check::kTsHooks,
                                                check::kTsMobile,
                                                check::kMetaProducer,
                                                check::kCodeOps,
                                                check::kPt2Kind,
                                                check::kPt2Version,
                                                check::kPt2Program,
                                                check::kPt2Weights,
                                                check::kPt2Aoti,
                                                check::kPt2Ops,
                                                check::kPteFormat,
                                                check::kPteData,
                                                check::kPteKernels,
                                                check::kPteDelegates,
                                                check::kPteBundled,
                                                check::kTorchSandbox,
                                                check::kTorchLoad,
                                                check::kTorchUnsafe,
                                                check::kTsBytecode,
                                                check::kTorchMethod,
                                                check::kTorchOps,
                                                check::kTorchMobile,
                                                check::kTorchRun,
                                                check::kTorchOutputs,
                                                check::kTorchFinite,
                                                check::kTorchDeterministic,
                                                check::kTorchStateful,
                                                check::kTorchReference,
                                                check::kTorchIntermediates};
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
