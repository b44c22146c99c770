// What XNNPACK's prepacked operators do not check. optimize_for_mobile
// replaces aten::linear and aten::conv2d with prepacked::linear_clamp_run and
// prepacked::conv2d_clamp_run, which skip the shape checks of the operators
// they replace: a prepacked linear reads the first in_features values of each
// row whatever the row's length, a prepacked convolution takes any number of
// input channels. A model fed an input its weights contradict then runs and
// returns numbers. While a PackedOpChecks lives, every call of those
// operators is compared with its weights as the unpacked operator would
// compare them, and the first contradiction is kept in that operator's own
// words (so that the refinement rules read it as they read LibTorch's
// errors). Private to the model check.
#pragma once

#include <ATen/record_function.h>
#include <torch/script.h>

#include <string>
#include <unordered_set>

namespace tsctl {

//
// Given the data of the tensors a model stores (parameters, buffers,
// attributes), it also checks elementwise operators (add, sub, mul, div)
// between a stored table (two or more sizes, none of them 1) and a tensor
// of several values computed from the inputs whose last size is 1:
// broadcasting that 1 against the table's feature runs and means nothing
// (rows of 8 values against a table of 8 columns, fed a column of 16). A
// stored row or vector ([1, 8], [8]) is made to broadcast: not checked.
// The elementwise operators checked against stored tables: add, sub, mul,
// div, rsub, and their in-place forms.
bool IsElementwise(const std::string& op);
// A stored table: two or more sizes, none of them 1 (a row or vector made
// to broadcast, [1, 8] or [8], is none).
bool IsTable(at::IntArrayRef sizes);
// Whether `method` (inlined) applies an elementwise operator to a tensor
// attribute of its module: then its runs are worth watching for a column
// broadcast against a stored table (false where the graph cannot be read).
bool ElementwiseOnStored(const torch::jit::Method& method);
// The data of every tensor a module holds (parameters, buffers, tensor
// attributes), its submodules' too: what PackedOpChecks counts as stored.
std::unordered_set<const void*> StoredData(const torch::jit::Module& module);

class PackedOpChecks {
 public:
  // Starts checking (a global RecordFunction callback that reads the inputs
  // of each operator call: install it only where a graph calls prepacked
  // operators or an elementwise operator on a stored tensor, it boxes every
  // operator's inputs while it lives).
  explicit PackedOpChecks(std::unordered_set<const void*> stored = {});
  ~PackedOpChecks();
  PackedOpChecks(const PackedOpChecks&) = delete;
  PackedOpChecks& operator=(const PackedOpChecks&) = delete;

  // The first contradiction seen since the start or the last Take(), and
  // forget it: "prepacked::linear_clamp_run read 3072 of the 37632 values of
  // each row where aten::linear would have refused: mat1 and mat2 shapes
  // cannot be multiplied (1x37632 and 3072x10)"; "" if none.
  std::string Take();

 private:
  at::CallbackHandle handle_ = 0;
};

}  // namespace tsctl
