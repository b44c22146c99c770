// .pt2 archives in the LibTorch plugin: AOTInductor packages loaded and run
// through torch::inductor::AOTIModelPackageLoader (LibTorch 2.x only; the
// 1.13 build compiles stubs that say so). Private to the plugin.
#pragma once

#include "tsctl/bench.h"
#include "tsctl/torch_backend.h"
#include "model_check.h"

namespace tsctl {

// What this LibTorch runs of .pt2 archives.
Pt2Support DescribePt2Support();

// validate's load-and-run of a .pt2 (options.pt2.kind kAoti): the result as
// for a TorchScript archive. Throws tsctl::Error (kUsage) for inputs that do
// not fit, (kUnavailable) in a build without the AOTInductor loader.
ModelCheckResult CheckPt2Model(const ModelCheckOptions& options);

// bench of a .pt2 AOTInductor package (options.pt2.kind kAoti). Throws
// tsctl::Error as TorchBackend::Bench.
BenchResult BenchPt2(const BenchOptions& options);

}  // namespace tsctl
