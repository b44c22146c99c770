// What a method's graph says about the shape of a tensor argument: the
// first operators that consume it and what their weights, constants and
// semantics require (a convolution's input channels and rank, a linear
// layer's width, an embedding's vocabulary, a norm's channels, a reshape's
// sizes, the bounds of constant slices). Private to infer_inputs.cc.
#pragma once

#include <torch/script.h>

#include <optional>
#include <string>
#include <vector>

#include "tsctl/inputs.h"

namespace tsctl {

// A candidate input and why: "from conv1.weight [64, 3, 7, 7]".
struct Shape {
  InputSpec spec;
  std::string note;
};

// A float input spec of `shape` (or of `dtype`).
InputSpec Spec(std::vector<int64_t> shape, std::string dtype = "float32");

// A weight kept packed in an operator context: XNNPACK's prepacked
// convolution and linear contexts (optimize_for_mobile), quantized packed
// parameters (Conv2dPackedParamsBase, LinearPackedParamsBase).
struct PackedWeight {
  at::Tensor weight;  // as the unpacked module holds it: [out, in/groups, k...], transposed [in, out/groups, k...]
  int64_t groups = 1;
  bool transposed = false;
};

// The weight of a packed context, read the way its class serializes itself
// (XNNPACK contexts by __getstate__, quantized parameters by their unpack
// operators); nullopt for any other object or one that cannot say.
std::optional<PackedWeight> UnpackWeight(const c10::IValue& v);

// Resolves graph values that come from the module: attributes reached from
// `self` through prim::GetAttr, constants, and a few views of them.
class Resolver {
 public:
  Resolver(const torch::jit::Module& module, torch::jit::Value* self) : module_(module), self_(self) {}

  // The value `v` stands for, or None; `name` is set to its attribute path
  // ("conv1.weight") or "a constant".
  c10::IValue Resolve(torch::jit::Value* v, std::string& name) const;
  std::optional<at::Tensor> Tensor(torch::jit::Value* v, std::string& name) const;
  std::optional<PackedWeight> Packed(torch::jit::Value* v, std::string& name) const;
  std::optional<std::vector<int64_t>> IntList(torch::jit::Value* v) const;
  std::optional<int64_t> Int(torch::jit::Value* v) const;
  bool Bool(torch::jit::Value* v, bool fallback) const;

 private:
  const torch::jit::Module& module_;
  torch::jit::Value* self_;
};

// Shapes the first informative consumers of `x` imply, in the order found
// (at most about 16): a breadth-first walk through value-preserving
// operators, branches and loops, up to a depth of 10.
std::vector<Shape> ShapesFromGraph(torch::jit::Value* x, const Resolver& r);

}  // namespace tsctl
