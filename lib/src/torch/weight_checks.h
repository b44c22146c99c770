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

#include <string>

namespace tsctl {

class PackedOpChecks {
 public:
  // Starts checking (a global RecordFunction callback that reads the inputs
  // of each operator call: install it only where a graph calls prepacked
  // operators, it boxes every operator's inputs while it lives).
  PackedOpChecks();
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
