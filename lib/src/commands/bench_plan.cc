// What bench decides before and after it measures, with no rendering: the
// combinations a --sweep tries, which one it recommends, and the statistics
// of a run's latencies (the renderers in render/ print them).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "../text/units.h"
#include "tsctl/bench.h"

namespace tsctl {
namespace {

double Percentile(std::vector<uint64_t> sorted, double p) {
  if (sorted.empty()) return 0;
  // Linear interpolation between closest ranks (numpy's default).
  double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(rank)), hi = static_cast<size_t>(std::ceil(rank));
  double frac = rank - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) * (1 - frac) + static_cast<double>(sorted[hi]) * frac;
}

}  // namespace

Stats ComputeStats(const BenchResult& r, const std::vector<double>& percentiles) {
  Stats s;
  const auto& l = r.latencies_ns;
  if (l.empty()) return s;
  std::vector<uint64_t> sorted = l;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(l.begin(), l.end(), 0.0) / static_cast<double>(l.size());
  double var = 0;
  for (uint64_t v : l) var += (static_cast<double>(v) - s.mean) * (static_cast<double>(v) - s.mean);
  s.stddev = l.size() > 1 ? std::sqrt(var / static_cast<double>(l.size() - 1)) : 0;
  s.median = Percentile(sorted, 50);
  for (double p : percentiles) s.percentiles.emplace_back(p, Percentile(sorted, p));
  s.throughput = r.wall_ns ? static_cast<double>(l.size()) / (static_cast<double>(r.wall_ns) / 1e9) : 0;
  return s;
}

std::vector<ExecutionSettings> SweepSettings(bool cuda) {
  std::vector<ExecutionSettings> out;
  for (bool optimized : {true, false}) {
    for (bool inference : {true, false}) {
      for (bool profiling : {true, false}) {
        for (bool fuser : {true, false}) {
          ExecutionSettings s;
          s.optimized_execution = optimized;
          s.inference_mode = inference;
          s.jit_profiling = profiling;
          s.jit_executor = true;
          s.tensor_fuser = fuser;
          out.push_back(s);
        }
      }
    }
  }
  (void)cuda;
  return out;
}

std::vector<SweepRow> AotiSweepRows(int cores) {
  std::vector<int> threads = {0};
  if (cores > 1) threads.push_back(1);
  if (cores / 2 > 1) threads.push_back(cores / 2);
  std::vector<SweepRow> out;
  for (int t : threads) {
    for (bool inference : {true, false}) {
      SweepRow row;
      row.aoti = true;
      row.threads = t;
      row.settings.inference_mode = inference;
      out.push_back(row);
    }
  }
  return out;
}

bool IsDefaultSweepRow(const SweepRow& row) {
  return row.aoti ? row.settings.inference_mode && row.threads == 0 : IsDefaultSweepSettings(row.settings);
}

bool IsDefaultSweepSettings(const ExecutionSettings& s) {
  return s.optimized_execution && s.inference_mode && s.jit_profiling.value_or(true) && s.jit_executor.value_or(true) &&
         s.tensor_fuser.value_or(true);
}

SweepChoice ChooseSweep(const std::vector<SweepRow>& rows) {
  SweepChoice c;
  for (const auto& r : rows) {
    if (!r.ok) continue;
    if (!c.fastest || r.mean_ns < c.fastest->mean_ns) c.fastest = &r;
    if (!c.defaults && IsDefaultSweepRow(r)) c.defaults = &r;
  }
  if (!c.fastest) {
    c.reason = "every combination failed";
    return c;
  }
  if (!c.defaults) {
    c.recommended = c.fastest;
    c.reason = "the defaults' combination failed, so the fastest that ran is recommended";
    return c;
  }
  if (c.fastest == c.defaults) {
    c.recommended = c.defaults;
    c.reason = "the defaults were the fastest; keep them";
    return c;
  }
  auto half_width = [](const SweepRow& r) {
    return r.iterations > 1 ? 1.96 * r.stddev_ns / std::sqrt(static_cast<double>(r.iterations)) : r.mean_ns;
  };
  const double gain = c.defaults->mean_ns - c.fastest->mean_ns;
  const double noise = half_width(*c.defaults) + half_width(*c.fastest);
  const double floor = 0.01 * c.defaults->mean_ns;
  char buf[400];
  if (gain > noise && gain > floor) {
    c.recommended = c.fastest;
    std::snprintf(buf, sizeof buf,
                  "the fastest beats the defaults by %s (%.1f%%), more than the noise (%s: the 95%% confidence half-widths "
                  "of both means) and 1%%",
                  Ms(gain).c_str(), 100 * gain / c.defaults->mean_ns, Ms(noise).c_str());
  } else {
    c.recommended = c.defaults;
    std::snprintf(buf, sizeof buf,
                  "no combination beats the defaults beyond the noise (fastest %s faster, %.1f%%; noise %s: the 95%% "
                  "confidence half-widths of both means; or under 1%%): keep the defaults",
                  Ms(gain).c_str(), 100 * gain / c.defaults->mean_ns, Ms(noise).c_str());
  }
  c.reason = buf;
  return c;
}

}  // namespace tsctl
