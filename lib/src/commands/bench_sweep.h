#pragma once

#include <functional>
#include <vector>

#include "tsctl/bench.h"

namespace tsctl {

// Runs `base` once per combination of SweepSettings(), each in a fresh child
// process forked after LibTorch's plugin is loaded (no LibTorch state is
// shared: the parent runs nothing); failures become rows with an error.
std::vector<SweepRow> RunSweep(const BenchOptions& base, double timeout_seconds,
                               const std::function<void(size_t done, size_t total)>& progress = {});

}  // namespace tsctl
