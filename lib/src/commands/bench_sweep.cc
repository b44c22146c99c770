#include <algorithm>

#include "tsctl/bench.h"
#include "tsctl/bench_sweep.h"
#include "torch_child.h"

namespace tsctl {

std::vector<SweepRow> RunSweep(const BenchOptions& base, double timeout_seconds,
                               const std::function<void(size_t, size_t)>& progress) {
  std::vector<SweepRow> rows;
  bool cuda = base.device.rfind("cuda", 0) == 0;
  std::vector<ExecutionSettings> all = SweepSettings(cuda);
  WarmUpTorch();  // each combination's child is forked warm
  for (size_t i = 0; i < all.size(); ++i) {
    if (progress) progress(i, all.size());
    BenchOptions o = base;
    o.settings = all[i];
    o.settings.freeze = base.settings.freeze;
    o.settings.optimize_for_inference = base.settings.optimize_for_inference;
    o.settings.cache_cleaning = base.settings.cache_cleaning;
    o.profile = false;
    o.trace_path.clear();
    o.progress = nullptr;
    SweepRow row;
    row.settings = o.settings;
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
    } catch (const Error& e) {
      // Bad options or a missing device fail every combination alike: stop at the first.
      if (e.kind() == ErrorKind::kUsage || e.kind() == ErrorKind::kUnavailable) throw;
      row.error = e.what();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace tsctl
