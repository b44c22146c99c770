// Reading LibTorch's error for an inferred candidate, next to the
// inference that tries candidates (infer_inputs.cc, check_model_inputs.cc).
// Pure string work (no LibTorch types), tested in tsctl_torch_unit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tsctl/inputs.h"

namespace tsctl {

// The next inferred candidate, read from LibTorch's error for the last one:
// its standard shape and dtype messages (a convolution's channels or rank,
// a matrix product's inner size, a view's sizes, integer indices, a
// broadcast, a recurrent layer's input size or rank, a layer or batch norm's
// shape) name what the operator wanted. `args` are the candidate's arguments;
// the result changes one tensor argument, and `note` says which and why.
// nullopt when no rule reads the message (or no tensor argument fits it).
// `source` names where the message came from, for the note: LibTorch's
// error, or a run that went through whose input the weights contradict
// (PackedOpChecks words it as the unpacked operator's error).
struct Refinement {
  std::vector<ArgSpec> args;
  std::string note;  // "x 1x6x224x224:float32, from LibTorch's error: a convolution wants 6 channels"
  std::string why;   // "a convolution wants 6 channels": what the rule read
};
// `earlier`: the candidates this one was refined from, oldest first, with
// their errors: a count that must match (a flattened map before a linear
// layer) is solved from them (refine_count.cc).
struct Attempt {
  std::vector<ArgSpec> args;
  std::string error;
};
std::optional<Refinement> RefineFromError(const std::vector<ArgSpec>& args, const std::string& error,
                                          const std::string& source = "LibTorch's error",
                                          const std::vector<Attempt>& earlier = {});

namespace refine {

// `target`'s sizes grouped in order into `rank` sizes, read as a batch
// first and an image's height and width last (most nearly equal, within
// 2:1), fewest channels: [1, 1, 4, 7, 4, 7] into rank 4 is [1, 1, 28, 28]
// (refine_count.cc; also the graph walk's reading of a view to constant
// sizes).
std::optional<std::vector<int64_t>> GroupedShape(const std::vector<int64_t>& target, size_t rank);

}  // namespace refine

}  // namespace tsctl
