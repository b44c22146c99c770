// A tensor as the LibTorch child saw it: dtype, shape and device, typed, so
// that renderers (text, JSON, the Triton config) never read them back out
// of a printed description.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tsctl {

struct TensorDesc {
  std::string dtype;            // "float32", as InputSpec and inspect name dtypes ("qint8", "complex64", ...)
  std::vector<int64_t> shape;   // [] for a 0-dim tensor
  std::string device = "cpu";   // "cpu", "cuda:0"
};

}  // namespace tsctl
