// Recursive comparison of two values of any type (tensors, numbers,
// strings, lists, tuples, dicts), one leaf at a time, named by its path.
#pragma once

#include <torch/script.h>

#include <string>
#include <vector>

#include "model_check.h"

namespace tsctl {

// The tolerances for the n-th compared leaf (0-based, in walk order).
struct Tolerances {
  std::vector<double> rtol = {1e-5};  // one value, or one per leaf
  std::vector<double> atol = {1e-8};
  // Equal values only (NaN and Inf in the same places count as equal).
  static Tolerances Exact() { return {{0}, {0}}; }
};

// Compares `got` with `want`, appending one ReferenceLeaf per leaf at `path`
// ("outputs", "outputs[1][\"scores\"]"): tensors by shape, dtype kind and
// |got - want| <= atol + rtol * |want|; floats likewise; ints, bools, strings
// and None exactly; lists/tuples by length then element; dicts by keys then
// value. Values that cannot be compared (objects) give a leaf with
// `compared` false.
void CompareValues(const c10::IValue& got, const c10::IValue& want, const std::string& path, const Tolerances& tol,
                   std::vector<ReferenceLeaf>& out);

// Every leaf of a value with a short description ("float32[1, 10]", "int 7"),
// and its NaN/Inf count; at most `max_leaves`.
std::vector<OutputSummary> SummarizeOutputs(const c10::IValue& value, const std::string& path, size_t max_leaves = 64);

// "List[int]", "Tensor": the kind of a value for messages.
std::string KindOf(const c10::IValue& v);

}  // namespace tsctl
