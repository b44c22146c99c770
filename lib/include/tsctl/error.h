// Errors raised by the tsctl library, and the exit codes the CLI maps them to.
#pragma once

#include <stdexcept>
#include <string>

namespace tsctl {

// What kind of failure an Error is. Each maps to one documented exit code.
enum class ErrorKind {
  kUsage,        // bad arguments or options (exit 2)
  kIo,           // a file is missing, unreadable or cannot be written (exit 3)
  kFormat,       // not a TorchScript archive, or a corrupt one (exit 4)
  kTorch,        // LibTorch rejected the archive or failed running it (exit 5)
  kUnavailable,  // a feature this build or machine lacks, e.g. CUDA (exit 6)
  // The archive fails a static check of validate's (zip.*, ts.*, pt2.*), so
  // it is not given to LibTorch: a finding, as validate reports it (exit 1).
  // Last: the child codec takes kinds up to this one.
  kRefused,
};

// Exit codes of the tsctl executable. Documented in README.md, docs/manual/cli.md and tsctl(1).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;  // validate found problems, diff found differences, trace/script diverged
inline constexpr int kExitUsage = 2;
inline constexpr int kExitIo = 3;
inline constexpr int kExitFormat = 4;
inline constexpr int kExitTorch = 5;
inline constexpr int kExitUnavailable = 6;
// validate: an archive whose model was to be loaded and run was not (and
// nothing FAILED; --allow-not-run makes it 0).
inline constexpr int kExitNotRun = 7;

int ExitCodeFor(ErrorKind kind);

// The one exception type the library throws. `what()` is a single line that
// names the failing thing and the cause; `detail()` may carry a multi-line
// diagnostic (a LibTorch backtrace) that the CLI shows only with -v.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, std::string detail = {})
      : std::runtime_error(message), kind_(kind), detail_(std::move(detail)) {}
  ~Error() override;  // out of line: keeps the type's identity in libtsctl

  ErrorKind kind() const { return kind_; }
  const std::string& detail() const { return detail_; }

 private:
  ErrorKind kind_;
  std::string detail_;
};

// Thrown when this process got SIGINT, SIGTERM or SIGHUP while a LibTorch
// child ran (the child's process group is killed first). The CLI says
// "interrupted" and exits with 128 + signal, as a shell does (130 for
// SIGINT, 143 for SIGTERM).
class Interrupted : public Error {
 public:
  explicit Interrupted(int signal);
  ~Interrupted() override;
  int signal() const { return signal_; }

 private:
  int signal_;
};

}  // namespace tsctl
