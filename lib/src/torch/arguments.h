// Method arguments of every type TorchScript takes, built from the command
// line's spelling (ArgSpec) and typed by the method's schema.
#pragma once

#include <torch/script.h>

#include <string>
#include <vector>

#include "tsctl/inputs.h"

namespace tsctl {

// The value of one argument of `type` from its spelling: a tensor spec or a
// nested number list for Tensor, JSON for the rest (see ArgSpec). `what`
// names the argument in errors. Throws tsctl::Error (kUsage) naming the
// argument, the type and what does not fit.
c10::IValue ArgumentValue(const c10::TypePtr& type, const std::string& text, const std::string& what, at::Generator& gen);

// The arguments of `schema` (its first, `self`, excluded) from `args` by
// position and by name; missing ones take the schema's default. Throws
// tsctl::Error (kUsage) saying how many arguments the method takes and their
// types when the count or a name does not fit.
// `bound`, if given, gets the position each of `args` took.
std::vector<c10::IValue> BuildArguments(const c10::FunctionSchema& schema, const std::vector<ArgSpec>& args,
                                        at::Generator& gen, std::vector<size_t>* bound = nullptr);

// The schema's user-visible arguments (`self` excluded), as
// ApplyValueRanges binds them.
std::vector<FormalArg> Formals(const c10::FunctionSchema& schema);

// Positional ArgSpecs from tensor specs (--input).
std::vector<ArgSpec> ArgsFromInputs(const std::vector<InputSpec>& inputs);

// "x: Tensor, k: int = 3": the user-visible arguments of a schema.
std::string DescribeArguments(const c10::FunctionSchema& schema);
// Number of user-visible arguments and how many have no default.
size_t ArgumentCount(const c10::FunctionSchema& schema);

// "x=1x3x8x8:float32, k=3" and the flags that give them:
// "--arg x=1x3x8x8:float32 --arg k=3" (shell-quoted where needed).
std::string DescribeArgs(const std::vector<ArgSpec>& args);
std::string ArgsAsFlags(const std::vector<ArgSpec>& args);

// The total bytes of the tensors the spelling would allocate (tensor specs
// anywhere inside it); used to refuse inputs over a memory budget.
uint64_t ArgumentBytes(const std::string& text);

}  // namespace tsctl
