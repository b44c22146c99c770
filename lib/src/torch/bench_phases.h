// The phases of a bench run (warm-up, then timing), each bounded by a count
// of calls or by time, shared by the TorchScript loop (bench_runner.cc) and
// the AOTInductor one (pt2_bench.cc). Private to the LibTorch plugin.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tsctl/torch_backend.h"

namespace tsctl {

inline uint64_t BenchNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// How long a phase lasts: `calls` calls when > 0, else until `seconds` have
// passed since the phase began (at least one call when seconds > 0).
struct PhaseBound {
  int calls = 0;
  double seconds = 0;
};

// --warmup N (a count, when >= 0) or --warmup-time S.
inline PhaseBound WarmupBound(const BenchOptions& o) {
  return o.warmup >= 0 ? PhaseBound{o.warmup, 0} : PhaseBound{0, o.warmup_seconds};
}
// --iters N (a count, when > 0) or --duration S.
inline PhaseBound TimingBound(const BenchOptions& o) {
  return o.iters > 0 ? PhaseBound{o.iters, 0} : PhaseBound{0, std::max(1e-3, o.duration_seconds)};
}

// BenchOptions::progress for a phase (kWarmup or kTiming), at most ten
// events a second (so that the pipe stays out of the timings): calls made of a
// count, or tenths of a second spent of a time. Empty without progress.
inline std::function<void(int, uint64_t)> PhaseTicker(const BenchOptions& o, ProgressEvent::Kind phase, PhaseBound bound) {
  if (!o.progress) return {};
  return [&o, phase, bound, next_ns = uint64_t{0}](int calls, uint64_t spent_ns) mutable {
    if (spent_ns < next_ns) return;
    next_ns = spent_ns + 100000000;
    if (bound.calls > 0) {
      o.progress({.kind = phase, .done = calls, .total = bound.calls});
    } else {
      o.progress({.kind = phase,
                  .done = static_cast<int64_t>(spent_ns / 100000000),
                  .total = static_cast<int64_t>(bound.seconds * 10 + 0.5),
                  .seconds = true});
    }
  };
}

// One phase: `call()` (whose time is a latency) until `bound` is reached,
// latencies appended to `out`; `after()` runs after each call, outside the
// latency (cache cleaning); `tick` (may be empty) is called after each call
// with the calls made and the time spent.
template <typename Call, typename After>
void TimePhase(PhaseBound bound, std::vector<uint64_t>& out, Call&& call, After&& after,
               const std::function<void(int, uint64_t)>& tick) {
  const uint64_t start = BenchNowNs(), budget = static_cast<uint64_t>(std::max(0.0, bound.seconds) * 1e9);
  for (int i = 0; bound.calls > 0 ? i < bound.calls : (budget > 0 && (i == 0 || BenchNowNs() - start < budget)); ++i) {
    const uint64_t t0 = BenchNowNs();
    call();
    out.push_back(BenchNowNs() - t0);
    after();
    if (tick) tick(i + 1, BenchNowNs() - start);
  }
}

}  // namespace tsctl
