// Inputs for a method when none are given or stored: candidates from the
// method's schema and from what the first operators consuming each argument
// require (conv/linear/embedding/LSTM weight shapes, reshape constants).
#pragma once

#include <torch/script.h>

#include <string>
#include <vector>

#include "tsctl/inputs.h"

namespace tsctl {

struct InputCandidate {
  std::vector<ArgSpec> args;  // one per argument without a default, by name
  std::string note;           // "x from conv1.weight [64, 3, 7, 7]"
};

// Candidates for `method` of `module`, most likely first (at most
// `max_candidates`). Never throws for an unusual graph: arguments it learns
// nothing about get generic shapes and the schema's defaults.
std::vector<InputCandidate> InferInputCandidates(const torch::jit::Module& module, const torch::jit::Method& method,
                                                 size_t max_candidates = 12);

// The inputs a module's bundled-inputs methods (torch.utils.bundled_inputs:
// get_all_bundled_inputs_for_<method>, or get_all_bundled_inputs for
// forward) return first; empty if it has none. `source` names the method.
std::vector<c10::IValue> BundledInputs(torch::jit::Module& module, const std::string& method, std::string& source);

}  // namespace tsctl
