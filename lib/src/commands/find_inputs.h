// Inputs for a run when neither the command line nor the archive gives any:
// bundled, else inferred from the method and confirmed by running it in an
// isolated child. Shared by bench and trace (validate does the same inside its check).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tsctl/inputs.h"
#include "tsctl/run_spec.h"

namespace tsctl {

struct FoundInputs {
  bool found = false;
  std::vector<InputSpec> inputs;  // stored tensor specs
  std::vector<ArgSpec> args;      // inferred arguments
  std::string source;             // "extra/tsctl_inputs.json", "inferred", "bundled inputs (...)", "no arguments"
  std::string note;               // "x from conv1.weight [64, 3, 7, 7]"
  std::string flags;              // "--arg x=1x3x224x224:float32": pins them
  std::string why;                // when not found: what was tried, what the method takes
};

// Loads the archive in a child that tries its bundled inputs, then inferred
// candidates (ResolveInputs's kInferred: the caller found none kept in the
// archive), with the spec's method, libraries, quantized engine, seed,
// value ranges and timeout. Throws tsctl::Error of the child's kind for an
// unavailable plugin; a child that crashes or hangs is `found` false with
// `why` saying so. `progress`, called in this process as the child tries
// inferred candidates: the candidate's number (from 1) and the flags that
// would pin it. `load_path`: what the child loads when not `path` (the
// descriptor of the archive the caller checked, "/proc/self/fd/N").
FoundInputs FindInputs(const std::string& path, const RunSpec& spec,
                       const std::function<void(long candidate, const std::string& flags)>& progress = nullptr,
                       const std::string& load_path = {});

// "inferred: x=1x3x224x224:float32 (x from conv1.weight [64, 3, 7, 7]); pin with --arg ..."
std::string DescribeFound(const FoundInputs& found);

}  // namespace tsctl
