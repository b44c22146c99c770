// A custom operator library for the tests of --load-library: registers
// tsctl_test::affine, which no LibTorch has, the way a team's C++ extension
// (or torchvision's _C) does.
#include <torch/library.h>
#include <torch/torch.h>

namespace {

at::Tensor Affine(const at::Tensor& x, double scale, double shift) { return x * scale + shift; }

}  // namespace

TORCH_LIBRARY(tsctl_test, m) { m.def("affine(Tensor x, float scale, float shift) -> Tensor", &Affine); }
