#include "pte_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "process.h"
#include "sandbox.h"
#include "tsctl/error.h"

namespace tsctl {
namespace {

constexpr int kResultFd = 3;
constexpr int kProgramFd = 4;  // the checked program, when the request names its descriptor

// What a wait status says of a child that sent no result.
std::string Ended(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result";
  return "ended without a result";
}

}  // namespace

bool PteRuntimeBuilt() {
#ifdef TSCTL_PTE_RUNTIME
  return true;
#else
  return false;
#endif
}

std::string PteRuntimeVersion() {
#ifdef TSCTL_PTE_RUNTIME
  return TSCTL_PTE_RUNTIME;
#else
  return "";
#endif
}

namespace {

// The runner's command line for `request`.
std::vector<std::string> RunnerArgs(const PteRunRequest& request) {
  std::vector<std::string> args = {"tsctl-pte-runner", "--result-fd", std::to_string(kResultFd),
                                   request.registry     ? std::string("--registry")
                                   : request.program_fd >= 0 ? "/proc/self/fd/" + std::to_string(kProgramFd)
                                                             : request.program};
  for (const std::string& d : request.data) args.insert(args.end(), {"--data", d});
  if (!request.method.empty()) args.insert(args.end(), {"--method", request.method});
  for (const std::string& in : request.inputs) args.insert(args.end(), {"--input", in});
  for (const std::string& a : request.args) args.insert(args.end(), {"--arg", a});
  if (request.memory_bytes) args.insert(args.end(), {"--memory", std::to_string(request.memory_bytes)});
  if (request.timeout_seconds > 0) args.insert(args.end(), {"--cpu", std::to_string(request.timeout_seconds * 4)});
  if (!request.sandbox) args.push_back("--no-sandbox");
  if (!request.load_inputs.empty()) args.insert(args.end(), {"--load-inputs", request.load_inputs});
  if (request.threads > 0) args.insert(args.end(), {"--threads", std::to_string(request.threads)});
  if (!request.run) args.push_back("--no-run");
  if (!request.save_inputs.empty()) args.insert(args.end(), {"--save-inputs", request.save_inputs});
  if (!request.save_outputs.empty()) args.insert(args.end(), {"--save-outputs", request.save_outputs});
  if (request.bundled) {
    auto list = [](const std::vector<double>& v) {
      std::string s;
      char b[32];
      for (double d : v) {
        std::snprintf(b, sizeof b, "%.17g", d);
        s += (s.empty() ? "" : ",") + std::string(b);
      }
      return s;
    };
    args.insert(args.end(), {"--bundled", "--rtol", list(request.rtol), "--atol", list(request.atol)});
  }
  if (request.bench) {
    args.push_back("--bench");
    if (request.profile > 0) args.insert(args.end(), {"--profile", std::to_string(request.profile)});
    if (request.warmup >= 0) args.insert(args.end(), {"--warmup", std::to_string(request.warmup)});
    else args.insert(args.end(), {"--warmup-seconds", std::to_string(request.warmup_seconds)});
    if (request.iters > 0) args.insert(args.end(), {"--iters", std::to_string(request.iters)});
    else args.insert(args.end(), {"--duration", std::to_string(request.duration_seconds)});
  }
  return args;
}

// Forks and execs the runner: stdout and stderr on `out`'s write end, its
// frames on `frames`' (as descriptor 3); the parent's ends stay open.
pid_t StartRunner(const std::string& path, std::vector<std::string> args, const int frames[2], const int out[2],
                  int program_fd) {
  std::vector<ChildFd> fds = {{frames[1], kResultFd}};
  if (program_fd >= 0) fds.push_back({program_fd, kProgramFd});
  return SpawnProgram(path, std::move(args), SandboxEnvironment(), out[1], fds, [](int err) {
    const char* why = std::strerror(err);
    (void)!::write(STDERR_FILENO, why, std::strlen(why));
  });
}

// Reads the runner's frames and output until both pipes end, the time is
// up (the group killed) or a signal comes (the group killed, Interrupted).
void ReadRunner(pid_t pid, int frames_fd, int out_fd, double timeout_seconds, PteRunOutcome& outcome) {
  SignalCatcher signals;
  std::string buffer;
  bool frames_open = true, out_open = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (frames_open || out_open) {
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (timeout_seconds > 0 && left <= 0) {
      KillGroup(pid);
      outcome.died = "timed out after " + std::to_string(static_cast<int>(timeout_seconds)) + " s";
      return;
    }
    pollfd p[3] = {{frames_open ? frames_fd : -1, POLLIN, 0}, {out_open ? out_fd : -1, POLLIN, 0}, {signals.fd(), POLLIN, 0}};
    const int ms = timeout_seconds > 0 ? static_cast<int>(std::min(left * 1000 + 1, 1000.0)) : 1000;
    if (::poll(p, 3, ms) < 0 && errno != EINTR) return;
    if (int sig = signals.Caught()) {
      KillGroup(pid);
      throw Interrupted(sig);
    }
    if (out_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      out_open = outcome.output.Drain(out_fd) != ChildOutput::Pipe::kEnded;
    }
    if (frames_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      char chunk[65536];
      const ssize_t n = ::read(frames_fd, chunk, sizeof chunk);
      if (n > 0) {
        buffer.append(chunk, static_cast<size_t>(n));
        TakeFrames(buffer, [&](char type, std::string payload) {
          if (type == 'R') outcome.result = std::move(payload);
          if (type == 'S') outcome.stopped = std::move(payload);
          if (type == 'I') outcome.saved_inputs = std::move(payload);
          if (type == 'O') outcome.saved_outputs = std::move(payload);
          if (type == 'E') outcome.etdump = std::move(payload);
        });
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        frames_open = false;
      }
    }
  }
}

}  // namespace

PteRunOutcome RunPteChild(const PteRunRequest& request) {
  if (!PteRuntimeBuilt()) {
    throw Error(ErrorKind::kUnavailable, "this build has no ExecuTorch runtime (scripts/install_executorch_sdk.sh, then build again)");
  }
  int frames[2], out[2];
  if (::pipe2(frames, O_CLOEXEC) != 0) throw Error(ErrorKind::kIo, std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(frames[0]);
    ::close(frames[1]);
    throw Error(ErrorKind::kIo, std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t pid = StartRunner(PteRunnerPath(), RunnerArgs(request), frames, out, request.program_fd);
  ::close(frames[1]);
  ::close(out[1]);
  if (pid < 0) {
    ::close(frames[0]);
    ::close(out[0]);
    throw Error(ErrorKind::kIo, std::string("fork: ") + std::strerror(errno));
  }
  PteRunOutcome outcome;
  try {
    ReadRunner(pid, frames[0], out[0], request.timeout_seconds, outcome);
  } catch (...) {
    Reap(pid);
    ::close(frames[0]);
    ::close(out[0]);
    throw;
  }
  ::close(frames[0]);
  ::close(out[0]);
  const int status = Reap(pid);
  if (outcome.result.empty() && outcome.died.empty() && outcome.stopped.empty()) outcome.died = Ended(status);
  return outcome;
}

}  // namespace tsctl
