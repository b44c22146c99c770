#include <algorithm>

#include "tsctl/bench.h"
#include "tsctl/bench_sweep.h"
#include "child.h"

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
      nlohmann::json j = RunInTorchChild<nlohmann::json>("benchmarking", timeout_seconds, [&](const TorchBackend& b) {
        BenchResult r = b.Bench(o);
        Stats s = ComputeStats(r, {90});
        return nlohmann::json{{"first", r.first_ns}, {"mean", s.mean}, {"median", s.median},
                              {"p90", s.percentiles.empty() ? 0.0 : s.percentiles[0].second},
                              {"stddev", s.stddev}, {"n", r.latencies_ns.size()}};
      });
      row.ok = true;
      row.first_ns = j.at("first").get<uint64_t>();
      row.mean_ns = j.at("mean").get<double>();
      row.median_ns = j.at("median").get<double>();
      row.p90_ns = j.at("p90").get<double>();
      row.stddev_ns = j.at("stddev").get<double>();
      row.iterations = j.at("n").get<uint64_t>();
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
