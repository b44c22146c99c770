// Model input specifications ("1x3x224x224:float32") and where to find them
// when the command line gives none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tsctl/archive.h"

namespace tsctl {

struct InputSpec {
  std::vector<int64_t> shape;
  std::string dtype = "float32";  // float32 float64 float16 bfloat16 int64 int32 int16 int8 uint8 bool
  bool channels_last = false;

  std::string ToString() const;
};

// Parses "1x3x224x224", "1x3x224x224:float32", "4:int64", "2x3:bool",
// "1x3x224x224:float16:channels_last", "scalar:int64" (shape []). Throws
// tsctl::Error (kUsage) naming what is wrong.
InputSpec ParseInputSpec(const std::string& text);

struct ArchiveInputs {
  std::vector<InputSpec> inputs;
  std::string source;  // "extra/tsctl_inputs.json", "traced_inputs.pkl"; empty if none
};

// Input specs stored in the archive for `method`: first extra/tsctl_inputs.json
// (written by tsctl trace / script: {"forward": ["1x3x8x8:float32"]}), then
// PyTorch's traced_inputs.pkl (shapes and dtypes of the example inputs a trace
// kept). Returns empty inputs if there are none.
ArchiveInputs InputsFromArchive(const Archive& archive, const std::string& method);

}  // namespace tsctl
