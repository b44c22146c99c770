// A ResolvedInputs onto a child's request (ModelCheckOptions, BenchOptions,
// TraceOptions): the fields the LibTorch plugin reads its arguments from.
// Private to lib/src/commands.
#pragma once

#include "tsctl/run_spec.h"

namespace tsctl {

// kReference is the caller's (validate hands the child its reference), and
// kInferred leaves the looking to the child unless ResolveInputs read the
// arguments from a .pt2's signature.
template <typename Request>
void ApplyResolved(const ResolvedInputs& in, Request& r) {
  switch (in.origin) {
    case InputOrigin::kGiven:
    case InputOrigin::kStored:
      r.inputs = in.inputs;
      r.args = in.args;
      break;
    case InputOrigin::kLoaded:
    case InputOrigin::kDataLoader:
    case InputOrigin::kRecorded:
      r.load_inputs_path = in.file;
      break;
    case InputOrigin::kSample:
      r.pt2.sample_inputs_path = in.file;  // set after r.pt2
      break;
    case InputOrigin::kInferred:
      r.args = in.args;
      break;
    case InputOrigin::kReference:
    case InputOrigin::kNone:
      break;
  }
  // A caller's own words for given inputs stay ("--shapes (opt)").
  if (in.origin != InputOrigin::kGiven || r.input_source.empty()) r.input_source = in.source;
}

}  // namespace tsctl
