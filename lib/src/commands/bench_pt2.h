// bench of a .pt2 (bench_pt2.cc): what the parent checks and fills in
// before the child times it.
#pragma once

#include <optional>

#include "tsctl/archive.h"
#include "tsctl/bench.h"
#include "tsctl/run_spec.h"

namespace tsctl {

// If options.path is a .pt2: checks that this build runs it (else
// tsctl::Error kUnavailable, one line saying why) and that it passes
// validate's static checks (else kRefused, CheckBeforeLoad), fills
// options.pt2, options.load_path (the descriptor of `checked`, which holds
// the package open until the child has run) and the inputs ResolveInputs
// finds (`inputs` keeps a file it wrote; kUsage if there are none), and
// returns true. False for any other file, untouched. Throws kFormat for a
// .pt2 whose ZIP structure is damaged.
bool PreparePt2Bench(BenchOptions& options, ResolvedInputs& inputs, std::optional<Archive>& checked);

}  // namespace tsctl
