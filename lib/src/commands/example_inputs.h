// The example inputs a tracer or the TorchScript converter takes: tensors
// only. Private to lib/src/commands (trace of an archive, migrate).
#pragma once

#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/inputs.h"
#include "tsctl/run_spec.h"

namespace tsctl {

struct ExampleInputs {
  std::vector<InputSpec> inputs;  // given, stored or inferred tensor specs
  std::string load_inputs_path;   // --load-inputs, or a recorded reference's temporary file
  // "inputs from extra/tsctl_inputs.json; pin them with --input 1x3:float32",
  // "inputs from extra/tsctl_reference.pt"; empty for given inputs.
  std::string note;
  std::string source;       // where they came from, in words
  ResolvedInputs resolved;  // owns a recorded reference's temporary file
};

// By ResolveInputs (for the method `spec.method`): given, loaded, stored, a
// recorded reference; none kept, a LibTorch child infers candidates
// (FindInputs), which must all be tensors. `work` names the work in errors
// ("tracing"). Throws tsctl::Error (kUsage) where none are found or the
// inferred ones are not all tensors.
ExampleInputs FindExampleInputs(const Archive& archive, const std::string& path, const RunSpec& spec,
                                const std::string& work);

}  // namespace tsctl
