// Runs a function in a child process, so that a crash or hang inside it
// (LibTorch's loader on a hostile archive) becomes data instead of taking
// tsctl down.
#pragma once

#include <functional>
#include <string>

#include "tsctl/error.h"

namespace tsctl {

struct IsolatedResult {
  bool ok = false;         // the child finished and returned normally
  std::string output;      // what the function returned
  int signal = 0;          // the signal that ended the child, if any
  bool timed_out = false;  // killed after the timeout
  int exit_code = 0;       // the child's exit code when it exited abnormally
  std::string error;       // a tsctl::Error's message thrown in the child
  ErrorKind error_kind = ErrorKind::kUnavailable;  // its kind (kTorch for other exceptions)
  double seconds = 0;
};

// Forks; the child runs `fn` and sends its result back through a pipe. The
// caller must not have started threads (LibTorch's pools) before: tsctl
// loads LibTorch only inside the child. Throws tsctl::Error (kIo) if the
// process cannot be created.
IsolatedResult RunIsolated(const std::function<std::string()>& fn, double timeout_seconds);

}  // namespace tsctl
