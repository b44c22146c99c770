#include <algorithm>
#include <thread>

#include "tsctl/bench.h"
#include "bench_sweep.h"
#include "torch_child.h"

namespace tsctl {
namespace {

// The rows to time: TorchScript's executor settings, or an AOTInductor
// package's threads and inference mode.
std::vector<SweepRow> RowsFor(const BenchOptions& base) {
  if (base.pt2.kind == Pt2RunSpec::Kind::kAoti) {
    return AotiSweepRows(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
  std::vector<SweepRow> rows;
  for (const ExecutionSettings& s : SweepSettings(base.device.rfind("cuda", 0) == 0)) {
    SweepRow row;
    row.settings = s;
    row.settings.freeze = base.settings.freeze;
    row.settings.optimize_for_inference = base.settings.optimize_for_inference;
    row.settings.cache_cleaning = base.settings.cache_cleaning;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

std::vector<SweepRow> RunSweep(const BenchOptions& base, double timeout_seconds,
                               const std::function<void(size_t, size_t)>& progress) {
  std::vector<SweepRow> rows = RowsFor(base);
  WarmUpTorch();  // each combination's child is forked warm
  for (size_t i = 0; i < rows.size(); ++i) {
    if (progress) progress(i, rows.size());
    SweepRow& row = rows[i];
    BenchOptions o = base;
    o.settings = row.settings;
    if (row.aoti) o.threads = row.threads;
    o.profile = false;
    o.trace_path.clear();
    o.progress = nullptr;
    // A child per combination: JIT settings are process-wide and a module's
    // executor keeps the mode it first ran with.
    try {
      BenchResult r = RunTorchChild(BenchRequest{.options = o}, {.timeout_seconds = timeout_seconds, .memory_bytes = base.memory_limit_bytes}).Take<BenchResult>("benchmarking");
      Stats s = ComputeStats(r, {90});
      row.ok = true;
      row.first_ns = r.first_ns;
      row.mean_ns = s.mean;
      row.median_ns = s.median;
      row.p90_ns = s.percentiles.empty() ? 0.0 : s.percentiles[0].second;
      row.stddev_ns = s.stddev;
      row.iterations = r.latencies_ns.size();
      row.run = std::move(r);
    } catch (const Error& e) {
      // Bad options or a missing device fail every combination alike: stop at the first.
      if (e.kind() == ErrorKind::kUsage || e.kind() == ErrorKind::kUnavailable) throw;
      row.error = e.what();
    }
  }
  return rows;
}

}  // namespace tsctl
