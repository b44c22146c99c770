// The fields a make's request to the LibTorch or Python child shares with
// the command's MakeRequest, copied in one place for trace, trace/script
// --python and export. Private to lib/src/commands.
#pragma once

#include "tsctl/run_spec.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

// What a trace, a Python make or an export (TraceOptions, PythonRequest)
// shares with the request: its run, the check inputs, --freeze, tolerances,
// output.
template <typename Made>
Made MadeOf(const MakeRequest& r) {
  Made o;
  static_cast<RunSpec&>(o) = r;
  o.check_inputs = r.check_inputs;
  o.freeze = r.freeze;
  o.rtol = r.rtol;
  o.atol = r.atol;
  o.output = r.output;
  return o;
}

}  // namespace tsctl
