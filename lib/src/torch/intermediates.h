// --compare-intermediates: every tensor a method's graph computes, recorded
// from one model and compared with another's on the same inputs, to find the
// first value where they part (Polygraphy's `--mark all`). Private to the
// LibTorch plugin.
#pragma once

#include <torch/script.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compare_values.h"
#include "model_check.h"

namespace tsctl {

// One value of the graph: the node that computed it and its debug name.
struct Intermediate {
  std::string kind;  // "aten::conv2d"
  std::string name;  // "input.3"
  at::Tensor value;
};

// Runs `method` of `module` on `inputs` with every tensor its top-level graph
// (inlined) computes as an extra output, in graph order (constants,
// attributes and uninitialized memory such as aten::empty's left out), the
// random generator seeded 0 first so that two models draw the same numbers.
// Values past `max_bytes` are left out and `note` says so. Throws what
// running throws.
std::vector<Intermediate> RecordIntermediates(const torch::jit::Module& module, const std::string& method,
                                              const std::vector<c10::IValue>& inputs, const torch::Device& device,
                                              uint64_t max_bytes, std::string& note);

// As a recording holds them: a list of (kind, name, tensor) tuples; and back
// (entries of another form are skipped).
c10::IValue PackIntermediates(const std::vector<Intermediate>& values);
std::vector<Intermediate> UnpackIntermediates(const c10::IValue& packed);

// Matches `a` (this model's) with `b` (the reference model's): by position
// when both graphs compute the same kinds of node in the same order, else by
// debug name when every one of a's names is among b's with the same kind;
// then compares each pair in a's order as --reference compares outputs and
// stops at the first that differs beyond `tol` (its first tolerance).
IntermediatesResult CompareIntermediates(const std::vector<Intermediate>& a, const std::vector<Intermediate>& b,
                                         const Tolerances& tol);

}  // namespace tsctl
