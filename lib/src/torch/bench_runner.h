#pragma once

#include "tsctl/bench.h"

namespace tsctl {

// See TorchBackend::Bench.
BenchResult RunBench(const BenchOptions& options);

}  // namespace tsctl
