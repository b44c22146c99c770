#include <algorithm>

#include "tsctl/bench.h"
#include "tsctl/bench_sweep.h"
#include "tsctl/error.h"
#include "tsctl/isolate.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

std::vector<SweepRow> RunSweep(const BenchOptions& base, double timeout_seconds,
                               const std::function<void(size_t, size_t)>& progress) {
  std::vector<SweepRow> rows;
  bool cuda = base.device.rfind("cuda", 0) == 0;
  std::vector<ExecutionSettings> all = SweepSettings(cuda);
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
    IsolatedResult r = RunIsolated(
        [&] {
          BenchResult b = GetTorchBackend().Bench(o);
          Stats s = ComputeStats(b, {90});
          nlohmann::json j = {{"first", b.first_ns}, {"mean", s.mean}, {"median", s.median},
                              {"p90", s.percentiles.empty() ? 0.0 : s.percentiles[0].second}};
          return j.dump();
        },
        timeout_seconds);
    if (r.ok) {
      auto j = nlohmann::json::parse(r.output);
      row.ok = true;
      row.first_ns = j["first"].get<uint64_t>();
      row.mean_ns = j["mean"].get<double>();
      row.median_ns = j["median"].get<double>();
      row.p90_ns = j["p90"].get<double>();
    } else if (!r.timed_out && !r.signal && !r.exit_code && r.error_kind == ErrorKind::kUsage) {
      // Bad options or inputs fail every combination alike: say so once.
      throw Error(ErrorKind::kUsage, r.error);
    } else if (r.timed_out) {
      row.error = "timed out";
    } else if (r.signal) {
      row.error = "crashed with signal " + std::to_string(r.signal);
    } else {
      row.error = r.error.empty() ? "failed" : r.error;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace tsctl
