#pragma once

#include <functional>
#include <vector>

#include "tsctl/bench.h"

namespace tsctl {

// Runs `base` once per combination of SweepSettings(), each in a fresh child
// process; failures become rows with an error. Must be called before this
// process loads LibTorch.
std::vector<SweepRow> RunSweep(const BenchOptions& base, double timeout_seconds,
                               const std::function<void(size_t done, size_t total)>& progress = {});

}  // namespace tsctl
