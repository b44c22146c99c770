// tsctl-pte-runner's helpers: --registry (what the linked ExecuTorch runtime
// registers: tsctl compat --dump-runtime executorch) and its inputs' values.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include <nlohmann/json.hpp>

#include "tsctl/dtype.h"

namespace tsctl {

// The kernels and backends linked into this runtime, as ExecuTorch's
// registries list them: {"kernels": [{"name", "key"}], "backends": [...]}.
// A kernel key ("v1/6;0,1,2,3|...") names the dtype and dim order of each
// tensor argument; "" registers the kernel for every one.
nlohmann::json Registry();

// The next value of a fixed generator in [0, 1) (the same values every run).
double NextUniform(uint64_t& state);
// Element `i` of `p` (of dtype `d`) set to `v` (integers truncated, bool v != 0).
void PutElement(void* p, const DtypeInfo& d, ssize_t i, double v);

}  // namespace tsctl
