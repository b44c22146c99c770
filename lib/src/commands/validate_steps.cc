// validate's rows run in order (RunRows), the LibTorch run's rows, and the
// time each check took (for JUnit). The whole table, --skip and ids:
// lib/src/formats/check_table.cc.
#include <algorithm>
#include <chrono>

#include "tsctl/error.h"
#include "check_context.h"
#include "validate_internal.h"

namespace tsctl {

const std::vector<CheckRow>& RunCheckRows() {
  static const std::vector<CheckRow> kRows = {
      {check::kTorchSandbox},
      {check::kTorchLoad, false, CheckRow::Stage::kLoad},
      {check::kTorchUnsafe},
      {check::kTsBytecode},
      {check::kTorchMethod, false, CheckRow::Stage::kMethod},
      {check::kTorchOps},
      {check::kTorchMobile},
      {check::kTorchRun, false, CheckRow::Stage::kRun},
      {check::kTorchOutputs},       {check::kTorchFinite},   {check::kTorchDeterministic}, {check::kTorchStateful},
      {check::kTorchReference},     {check::kTorchIntermediates},
  };
  return kRows;
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

void RunRows(const std::vector<CheckRow>& rows, CheckContext& context) {
  const std::vector<std::string>& skip = context.options.skip;
  for (const CheckRow& row : rows) {
    if (context.stop) return;
    if (!row.check) continue;
    const bool skipped = std::find(skip.begin(), skip.end(), row.id) != skip.end();
    if (skipped && !row.blocks_loading && !context.rows_block) {
      context.Add({row.id, CheckStatus::kSkip, "skipped by --skip"});
      continue;
    }
    const size_t before = context.report.checks.size();
    TimedStep(context.report.checks, [&] { row.check(context); });
    // A skipped row that ran and found nothing to judge still says SKIP in its place.
    if (skipped && context.report.checks.size() == before) context.Add({row.id, CheckStatus::kSkip, "skipped by --skip"});
  }
}

}  // namespace tsctl
