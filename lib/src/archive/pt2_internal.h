// Pieces of the .pt2 reader shared by pt2.cc and pt2_program.cc; not a
// public interface.
#pragma once

#include <string>

#include "pt2_json.h"
#include "tsctl/pt2.h"

namespace tsctl::pt2_internal {

// Reads one program's JSON record. Throws tsctl::Error (kFormat) if the
// record is missing, malformed or not an exported program.
Pt2Model ReadProgram(const Archive& a, const std::string& name, const std::string& record);

// m.sample_tensors (or m.sample_inputs_error) from m.sample_inputs
// (pt2_samples.cc).
void ReadSampleInputs(const Archive& a, Pt2Model& m);

// Sets dtype, shape, strides, device, numel and bytes of `t` from `meta`.
void SetMeta(const pt2_json::TensorMeta& meta, Pt2Tensor& t);

}  // namespace tsctl::pt2_internal
