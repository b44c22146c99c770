// Inputs for a run when the command line gives none: stored in the archive,
// else inferred from the method and confirmed by running it in an isolated
// child. Shared by bench and trace (validate does the same inside its check).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tsctl/inputs.h"

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

// Looks in the archive first (no LibTorch), then loads it in a child that
// tries bundled inputs and inferred candidates. Throws tsctl::Error of the
// child's kind for an unavailable plugin; a child that crashes or hangs is
// `found` false with `why` saying so.
// How the child that looks for inputs loads and runs the archive.
struct FindInputsOptions {
  std::vector<std::string> load_libraries;  // --load-library
  std::string quantized_engine;             // --quantized-engine
  double timeout_seconds = 300;
  uint64_t seed = 0;                      // --seed
  std::vector<ValueRange> value_ranges;   // --val-range
  // Called in this process as the child tries inferred candidates: the
  // candidate's number (from 1) and the flags that would pin it.
  std::function<void(long candidate, const std::string& flags)> progress = nullptr;
};

FoundInputs FindInputs(const std::string& path, const std::string& method, const FindInputsOptions& options = {});

// "inferred: x=1x3x224x224:float32 (x from conv1.weight [64, 3, 7, 7]); pin with --arg ..."
std::string DescribeFound(const FoundInputs& found);

}  // namespace tsctl
