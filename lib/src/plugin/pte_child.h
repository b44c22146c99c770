// The door to ExecuTorch's runtime: tsctl-pte-runner (lib/src/executorch/),
// a program of its own that links ExecuTorch's C++ runtime and no LibTorch,
// started fresh for each program (fork and exec; an emptied environment),
// its standard output and error one pipe tsctl reads and bounds
// (child_output.h), its result a frame on descriptor 3. It confines itself
// (sandbox.h) before it reads the program.
#pragma once

#include <string>
#include <vector>

#include "child_output.h"
#include "tsctl/pte.h"

namespace tsctl {

// Whether this build has the runner (built where CMake found ExecuTorch's
// SDK: scripts/install_executorch_sdk.sh), and its path.
bool PteRuntimeBuilt();
std::string PteRunnerPath();
// (PteRuntimeVersion(), what the runtime is: tsctl/pte.h.)

// The runner writes this line, and the method's name, on its stderr before
// loading each method: the runtime's log lines up to the next are that
// method's.
inline constexpr char kPteMethodMark[] = "tsctl-pte-runner: method ";

struct PteRunRequest {
  std::string program;             // the .pte, as named in messages
  int program_fd = -1;             // the descriptor of the checked file: the runner reads it (/proc/self/fd/4), not `program`
  std::vector<std::string> data;   // .ptd files
  std::string method;              // "": every method
  std::vector<std::string> inputs; // --input specs (InputSpec::ToString): the first tensor inputs
  std::vector<std::string> args;   // --arg VALUEs: the inputs after them, by position
  double timeout_seconds = 60;
  uint64_t memory_bytes = 0;       // address-space growth allowed; 0: none set
  bool sandbox = true;
  bool run = true;                 // false: load the program and its methods only
  bool registry = false;           // no program: the runtime's kernels and backends (runner --registry)
  // A bundled program (.bpte): its test cases run, each output compared with
  // the expected one at these tolerances (one for all outputs, or one each).
  bool bundled = false;
  std::vector<double> rtol{1e-5}, atol{1e-8};
  // --save-inputs/--save-outputs: "npz" or "npy" (NumPy's formats), the
  // values of forward (else the first method run), sent back as frames.
  std::string save_inputs, save_outputs;
  std::string load_inputs;  // --load-inputs FILE.npz|.npy: the inputs (the arrays in order), instead of made ones
  int threads = 0;  // the threadpool's size (0: ExecuTorch's default)
  int profile = 0;  // bench: this many calls traced by ETDumpGen after the timed ones (PteRunOutcome::etdump)
  // bench: one method (`method`, else forward, else the first) timed:
  // warm-up calls (a count >= 0, else seconds), then timed calls (a count
  // > 0, else seconds).
  bool bench = false;
  int warmup = -1;
  double warmup_seconds = 0.2;
  int iters = 0;
  double duration_seconds = 3;
};

struct PteRunOutcome {
  std::string result;     // the runner's JSON result; "" when it sent none
  std::string stopped;    // the sandbox stopped a call: its line
  std::string died;       // how it ended without a result ("killed by signal 11", "timed out after 60 s")
  ChildOutput output;     // its stdout and stderr
  std::string saved_inputs, saved_outputs;  // the files asked for by save_inputs/save_outputs, or ""
  std::string etdump;                       // with profile: the ETDump the runtime's tracer wrote
};

// Runs the runner on `request`. Throws tsctl::Error (kUnavailable) when this
// build has no runner or it cannot be started, tsctl::Interrupted on
// SIGINT/SIGTERM/SIGHUP (the child killed).
PteRunOutcome RunPteChild(const PteRunRequest& request);

}  // namespace tsctl
