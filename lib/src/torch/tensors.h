// Input tensors from specs, and flattening of outputs: shared by validate and bench.
#pragma once

#include <torch/script.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tsctl/dtype.h"
#include "tsctl/inputs.h"
#include "tsctl/tensor_desc.h"

namespace tsctl {

// "float32" -> at::kFloat. Throws tsctl::Error (kUsage) for a name that is
// not an input's dtype (tsctl/dtype.h's `input` column).
at::ScalarType ScalarTypeOf(const std::string& dtype);
// A row of tsctl/dtype.h as this LibTorch's ScalarType (the row's index is
// c10's value; checked against c10's own name); Undefined if null or if this
// LibTorch has no such type (1.13 has no uint16).
at::ScalarType AtScalarType(const DtypeInfo* dtype);

// A tensor of the spec's shape and dtype with reproducible values from
// `gen`: normal floats, integers in [0, 10), booleans. Throws tsctl::Error
// (kUsage) for a dtype LibTorch cannot make.
at::Tensor MakeInput(const InputSpec& spec, at::Generator& gen, const at::Device& device = at::kCPU);

// Every tensor in a (nested) output value, named "output", "output[0]",
// "output['key']" ... Non-tensor leaves are skipped.
std::vector<std::pair<std::string, at::Tensor>> FlattenTensors(const c10::IValue& value, const std::string& name = "output");

// "float32[1, 10]".
std::string Describe(const at::Tensor& t);
// A defined tensor of a dtype tsctl names (storage_types.h: the dtype of its
// storage class), typed; nullopt for anything else.
std::optional<TensorDesc> DescOf(const c10::IValue& value);
// A tensor's Describe, else the value's kind ("int", "Tuple", ...).
std::string DescribeValue(const c10::IValue& v);

}  // namespace tsctl
