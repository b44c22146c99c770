// Runs a helper program (Graphviz's dot for the report's graph) with its
// standard input from a string and its output captured, within a time.
// Private to lib/src/commands.
#pragma once

#include <string>
#include <vector>

namespace tsctl {

struct ProgramRun {
  bool started = false;   // false: the program was not found or could not run (`error` says why)
  bool timed_out = false; // killed at the time limit
  int exit_code = -1;     // its exit status; -1 if it died of a signal or did not end
  std::string out, err;   // standard output and error (each at most max_output bytes)
  std::string error;
};

// argv[0] is looked up in PATH. The child has its own process group, dies
// with this process, and is killed (with its group) after timeout_seconds.
// Input and output go through memory files, never the file system. Throws
// tsctl::Error (kIo) only when no memory file or process can be made.
ProgramRun RunProgram(const std::vector<std::string>& argv, const std::string& input, double timeout_seconds,
                      size_t max_output = size_t{256} << 20);

}  // namespace tsctl
