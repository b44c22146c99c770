// tsctl-pte-runner's helpers: --registry (what the linked ExecuTorch runtime
// registers: tsctl compat --dump-runtime executorch) and its inputs' values.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/executor/method_meta.h>

#include "../archive/numpy_file.h"
#include "tsctl/dtype.h"
#include "tsctl/inputs.h"

namespace tsctl {

// The kernels and backends linked into this runtime, as ExecuTorch's
// registries list them: {"kernels": [{"name", "key"}], "backends": [...]}.
// A kernel key ("v1/6;0,1,2,3|...") names the dtype and dim order of each
// tensor argument; "" registers the kernel for every one.
nlohmann::json Registry();

// The next value of a fixed generator in [0, 1) (the same values every run).
double NextUniform(uint64_t& state);
// Element `i` of `p` (of dtype `d`) set to `v` (integers truncated, bool v != 0).
void PutElement(void* p, const DtypeInfo& d, ssize_t i, double v);

// An input tensor of `info`'s dtype and sizes: floating types uniform in
// [0, 1) from `state`, others zeros; or, with `spec` (--input), its shape,
// dtype and fill (docs/manual/pte.md).
executorch::extension::TensorPtr MakeInput(const executorch::runtime::TensorInfo& info, const InputSpec* spec,
                                           uint64_t& state);

// `values` in NumPy's format (lib/src/zip/npz.h): `npz`, an .npz of arr_0,
// arr_1, ... (tensors in C order whatever their dim order, numbers as 0-d
// arrays, None left out); else one tensor's .npy. Throws tsctl::Error for
// what NumPy cannot hold.
std::string NumpyValues(const std::vector<executorch::runtime::EValue>& values, bool npz);

// A ScalarType value's name ("float32"), or "scalar type N".
std::string DtypeNameOf(int value);
// A runtime error's name and number ("InvalidArgument (18)").
std::string ErrorName(executorch::runtime::Error e);
// A value as the result describes it ({"kind", "dtype", "shape",
// "nonfinite"} of a tensor, {"kind", "value"} of a scalar); `hash` gets
// FNV-1a of its bytes (two runs' outputs compared).
nlohmann::json DescribeValue(const executorch::runtime::EValue& v, uint64_t& hash);

// The threadpool ExecuTorch's kernels and XNNPACK run on: its size set
// (--threads) and read.
void SetThreads(uint32_t threads);
size_t Threads();

// An array as an input: a tensor of its dtype and shape, elements in C order
// (`keep` holds it), or, `scalar`, the number a 0-d array holds. "" or why not.
std::string ValueFromArray(const NpyArray& a, const std::string& bytes, bool scalar, executorch::runtime::EValue& out,
                           std::vector<executorch::extension::TensorPtr>& keep);

// The inputs of method `name` (its metadata `meta`): from --load-inputs'
// `arrays` (null: none), else --input's `specs` for the first positions,
// --arg's `args` (a tensor spec, a number, a nested list) for the next, and
// MakeInput for the rest, a scalar the value the program holds for it;
// `keep` holds the tensors, `described` gets each as the result describes
// it. False, with m["input_error"], for one tsctl cannot make.
bool MakeInputs(executorch::extension::Module& module, const std::string& name, const executorch::runtime::MethodMeta& meta,
                const std::vector<InputSpec>& specs, const std::vector<std::string>& args, const NumpyArrays* arrays,
                std::vector<executorch::runtime::EValue>& inputs, std::vector<executorch::extension::TensorPtr>& keep,
                nlohmann::json& described, nlohmann::json& m);

// --bench --profile: the method `name` of `program` run `calls` times on
// `inputs` in a Module of its own traced by ExecuTorch's ETDumpGen;
// `etdump` gets what it recorded. {"profiled_calls"} or {"profile_error"}.
nlohmann::json ProfileMethod(const std::string& program, const std::vector<std::string>& data, const std::string& name,
                             const std::vector<executorch::runtime::EValue>& inputs, int calls, std::string& etdump);

// --bundled: the tolerances, one for every output or one per output.
struct BundledPlan {
  std::vector<double> rtol{1e-5}, atol{1e-8};
  bool run = true;  // false (--no-run): each method loaded, no case run
};

// Runs the test cases of the bundled program at `path` (those of method
// `only`, "" for all) on the program inside it, `data` its .ptd files; writes
// `method_mark` and the method's name on stderr before loading each method;
// `sandbox`: file writes are locked once the program is loaded.
// The result: {"methods": [{"name", "load_error" | "cases": [{"index",
// "input_error" | "run_error" | "ran", "ns", "returned", "outputs": [{"kind",
// "close", "why", "dtype", "shape", "numel", "mismatched", "max_abs",
// "first", "rtol", "atol"}]}]}]}, or {"program_error"}.
nlohmann::json RunBundled(const std::string& path, const std::vector<std::string>& data, const std::string& only,
                          const BundledPlan& plan, const char* method_mark, bool sandbox);

}  // namespace tsctl
