#include "torch_child.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "operator_libraries.h"
#include "plugin_abi.h"
#include "tsctl/atomic_file.h"
#include "tsctl/source.h"
#include "tsctl/text_util.h"
#include "process.h"
#include "sandbox.h"
#include "torch_child_sandbox.h"
#include "torch_child_codec.h"
#include "frame_stream.h"
#include "torch_server.h"

namespace tsctl {
namespace {

// The frames a LibTorch child sends (process.h): 'P' a progress line, 'A'
// its answer (the codec's).
constexpr char kProgressFrame = 'P';
constexpr char kAnswerFrame = 'A';
// 'S' the sandbox stopped it (one line), 'W' a file it wrote (sandbox.h:
// a 4-byte path length, the path, the bytes), written by the parent.
constexpr char kSandboxFrame = 'S';
constexpr char kFileFrame = 'W';
// 'U' a guard stopped the model before an operator ran (sandbox.h
// StopChild: one line), whether or not the sandbox is on.
constexpr char kStopFrame = 'U';
// How long the parent waits for the server's word that a child ended, once
// its pipe closed or it was killed.
constexpr double kEndSeconds = 30;

// In the child: what it inherited plus `cap` is all it may grow to
// (RLIMIT_DATA, soft limit: LibTorch's allocations fail with its
// "can't allocate memory" error instead of the kernel's OOM killer ending
// the child, or something else on the machine).
void CapMemory(uint64_t cap) {
  uint64_t now = ReadProcessMemory().data;
  rlimit limit{};
  if (now == 0 || ::getrlimit(RLIMIT_DATA, &limit) != 0) return;
  rlim_t want = static_cast<rlim_t>(now + cap);
  if (limit.rlim_max != RLIM_INFINITY && want > limit.rlim_max) want = limit.rlim_max;
  if (limit.rlim_cur != RLIM_INFINITY && want > limit.rlim_cur) return;
  limit.rlim_cur = want;
  ::setrlimit(RLIMIT_DATA, &limit);
}

// The child's work: the request's Run, its progress events sent as they come.
ChildValue Dispatch(const TorchBackend& b, const ChildRequest& request, int fd) {
  const ChildWork work{b, [fd](const ProgressEvent& e) { WriteFrame(fd, kProgressFrame, EncodeProgress(e)); }};
  return std::visit([&](const auto& r) { return r.Run(work); }, request);
}

// The child's side: limits first, then the sandbox, then the work, then the
// answer. `files` is what the parent found the request reads and writes.
void ChildMain(const ChildRequest& request, const RequestFiles& files, const ChildLimits& limits,
               const std::string& private_dir, int fd) {
  // What the model prints (TorchScript's print(), print() in --python code
  // or a data loader, a warning from any thread) goes to the output pipe
  // the server made its standard output and error (torch_server_main.cc),
  // never to tsctl's streams. Its answer travels on `fd`.
  const uint64_t memory = limits.memory_bytes;  // RunTorchChild set the default
  // The CUDA driver reserves address space that RLIMIT_DATA would count.
  if (!files.cuda) CapMemory(memory);
  std::string answer;
  try {
    const TorchBackend& backend = LoadTorchPlugin();
    LoadOperatorLibraries(files.libraries);  // the caller's: loaded before the sandbox
    if (files.profile == SandboxPolicy::Profile::kPackage) backend.PrepareForPackages();
    const SandboxPolicy policy = PolicyOf(files, limits, memory, private_dir);
    SendStopsTo(fd, kStopFrame);
    EnterSandbox(policy, fd, kSandboxFrame);
    using Profile = SandboxPolicy::Profile;
    if (policy.profile == Profile::kArchive || policy.profile == Profile::kPackage) SendChildFilesTo(fd, kFileFrame);
    // Not on a CUDA device: its driver opens /dev/nvidia* for writing as it
    // starts, during the work (docs/manual/sandbox.md says what that child lacks).
    if (policy.profile == Profile::kArchive && !policy.cuda) LockFileWrites();
    if (limits.threads > 0) backend.LimitThreads(limits.threads);
    answer = EncodeChildValue(Dispatch(backend, request, fd));
  } catch (const Error& e) {
    answer = EncodeChildError(e);
  } catch (const std::exception& e) {
    answer = EncodeChildError(Error(ErrorKind::kTorch, e.what()));
  }
  WriteFrame(fd, kAnswerFrame, answer);
}


// How the child ended, from its wait status (kExited until its answer is read).
void SetEnd(ChildOutcome& out, int status) {
  if (WIFSIGNALED(status)) {
    out.end = ChildEnd::kCrashed;
    out.signal = WTERMSIG(status);
    return;
  }
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  out.end = ChildEnd::kExited;
}

}  // namespace

void ServeChildLaunch(const std::string& request, int answer_fd) {
  ChildLaunch launch;
  try {
    launch = DecodeChildLaunch(request);
  } catch (const Error& e) {
    WriteFrame(answer_fd, kAnswerFrame, EncodeChildError(e));
    return;
  }
  // The caller's whole environment for the caller's own code (kPython) and
  // trusted archives (kOff), else the thread and device settings and TSCTL_*
  // (emptied further in the sandbox).
  ReplaceEnvironment(launch.environment);
  ChildMain(launch.request, launch.files, launch.limits, launch.private_dir, answer_fd);
}

Interrupted::Interrupted(int signal)
    : Error(ErrorKind::kIo, "interrupted by " + SignalName(signal)), signal_(signal) {}
Interrupted::~Interrupted() = default;

namespace {

// Reads the child's frames until it closes its pipe, or kills it when the
// deadline passes (out.end = kTimedOut), and its output pipe meanwhile
// (out.output), so that it never blocks on it. A signal caught meanwhile
// kills it and throws Interrupted. The answer frame lands in `answer`.
void PumpFrames(pid_t pid, const ChildPipes& pipes, SignalCatcher& signals, std::chrono::steady_clock::time_point deadline,
                FrameStream& frames, ChildOutcome& out) {
  const int fd = pipes.answer;
  int output = pipes.output;
  char chunk[65536];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      out.end = ChildEnd::kTimedOut;
      KillGroup(pid);
      return;
    }
    pollfd p[3] = {{fd, POLLIN, 0}, {signals.fd(), POLLIN, 0}, {output, POLLIN, 0}};
    int r = ::poll(p, 3, static_cast<int>(std::min<long long>(left, 1000)));
    if (r <= 0) continue;  // EINTR (a caught signal shows on its pipe) or a tick
    if (p[1].revents & POLLIN) {
      if (int sig = signals.Caught()) {
        KillGroup(pid);
        AwaitTorchChild(pid, kEndSeconds);
        ::close(fd);
        ::close(pipes.output);
        throw Interrupted(sig);
      }
    }
    if (p[2].revents && out.output.Drain(output) == ChildOutput::Pipe::kEnded) output = -1;
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EOF: the child closed the pipe (finished or died)
    frames.Feed(chunk, static_cast<size_t>(n));
  }
}

// The frames of a child's answer pipe: files stream to their paths
// (frame_stream.h), the rest into `out` and `answer`.
FrameStream ChildFrames(const std::set<std::string>& allowed, uint64_t max_file_bytes,
                        const std::function<void(const ProgressEvent&)>& on_progress, ChildOutcome& out,
                        std::optional<std::string>& answer) {
  return FrameStream(kFileFrame, allowed, max_file_bytes, [&out, &answer, on_progress](char type, std::string payload) {
    if (type == kProgressFrame) {
      if (std::optional<ProgressEvent> e = DecodeProgress(payload)) {
        out.progress = *e;
        if (on_progress) on_progress(*e);
      }
    } else if (type == kAnswerFrame) {
      answer = std::move(payload);
    } else if (type == kSandboxFrame) {
      out.sandbox = std::move(payload);
    } else if (type == kStopFrame) {
      out.unsafe_stop = std::move(payload);
    }
  });
}

// How the child ended, from the server's word on its wait status and what
// it sent: blocked by the sandbox, a file it could not write, its answer.
void JudgeEnd(pid_t pid, const std::optional<std::string>& answer, ChildOutcome& out) {
  // The server reaps it and says how it ended. A child that closed its pipe
  // and lives on is killed; no word at all (the server died, and the child
  // with it) reads as killed.
  int status = AwaitTorchChild(pid, kEndSeconds);
  if (status < 0) {
    KillGroup(pid);
    status = AwaitTorchChild(pid, kEndSeconds);
  }
  if (status < 0) status = SIGKILL;
  if (out.end == ChildEnd::kTimedOut) return;
  SetEnd(out, status);
  // A guard stopped an operator before it ran (--no-sandbox too).
  if (!out.unsafe_stop.empty() && out.end == ChildEnd::kExited && out.exit_code == kSandboxExit) {
    out.end = ChildEnd::kBlocked;
    out.sandbox = out.unsafe_stop;
    return;
  }
  // A filter that a model's native code unhooked still ends it with SIGSYS.
  if (out.end == ChildEnd::kCrashed && out.signal == SIGSYS && out.sandbox.empty()) {
    out.sandbox = "the model made a system call the sandbox denies (SIGSYS)";
  }
  if (!out.sandbox.empty() && SandboxOn()) {
    out.end = ChildEnd::kBlocked;
    return;
  }
  if (!out.write_error.empty()) {
    out.end = ChildEnd::kRaised;
    out.error_kind = ErrorKind::kIo;
    out.error = out.write_error;
    return;
  }
  if (out.end == ChildEnd::kExited && out.exit_code == 0 && answer) DecodeChildAnswer(*answer, out);
}

}  // namespace

ChildOutcome RunTorchChild(const ChildRequest& request, const ChildLimits& limits,
                           const std::function<void(const ProgressEvent&)>& on_progress) {
  ChildOutcome out;
  // The defaults made explicit: every child is bounded in time and memory.
  ChildLimits bounded = limits;
  if (bounded.timeout_seconds <= 0) bounded.timeout_seconds = kDefaultChildTimeout;
  if (bounded.memory_bytes == 0) bounded.memory_bytes = DefaultChildMemoryLimit();
  out.timeout_seconds = bounded.timeout_seconds;
  out.memory_bytes = bounded.memory_bytes;
  SignalCatcher signals;
  const auto start = std::chrono::steady_clock::now();
  ChildPipes pipes;
  const RequestFiles files = FilesOf(request);
  const std::set<std::string> allowed(files.writes.begin(), files.writes.end());
  PrivateDir private_dir;
  using Profile = SandboxPolicy::Profile;
  const bool callers_own = files.profile == Profile::kPython || files.profile == Profile::kOff;
  const pid_t pid = SpawnTorchChild(ChildLaunch{.request = request,
                                                .files = files,
                                                .limits = bounded,
                                                .private_dir = private_dir.path,
                                                .environment = callers_own ? WholeEnvironment() : SandboxEnvironment(),
                                                .descriptors = NamedDescriptors(files.reads)},
                                    &pipes);
  std::optional<std::string> answer;
  const auto deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(bounded.timeout_seconds));
  FrameStream frames = ChildFrames(allowed, bounded.max_output_bytes, on_progress, out, answer);
  PumpFrames(pid, pipes, signals, deadline, frames, out);
  if (frames.unnamed_file() && out.sandbox.empty()) out.sandbox = "the model tried to write a file the request did not name";
  if (!frames.write_error().empty()) out.write_error = frames.write_error();
  ::close(pipes.answer);
  JudgeEnd(pid, answer, out);
  // What it wrote last, bounded: a process it left behind (no sandbox) may
  // keep writing, and is not waited for.
  for (int i = 0; i < 16 && out.output.Drain(pipes.output) == ChildOutput::Pipe::kMore; ++i) {
  }
  ::close(pipes.output);
  ShowChildOutput(out.output, "tsctl: child output: ");
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string ChildOutcome::Failure(const std::string& doing) const {
  switch (end) {
    case ChildEnd::kTimedOut: {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", timeout_seconds);
      return "hung: LibTorch did not finish " + doing + " within " + secs + " s (killed; --timeout sets the limit)";
    }
    case ChildEnd::kCrashed:
      return "LibTorch crashed with " + SignalName(signal) + " (" + strsignal(signal) + ") while " + doing;
    case ChildEnd::kExited:
      return exit_code == 0 ? "the LibTorch child ended without an answer while " + doing
                            : "the LibTorch child exited with status " + std::to_string(exit_code) + " while " + doing;
    case ChildEnd::kRaised:
      return error;
    case ChildEnd::kBlocked:
      if (!unsafe_stop.empty()) return "tsctl stopped the model while " + doing + ": " + unsafe_stop;
      return "the sandbox stopped the model while " + doing + ": " + sandbox;
    case ChildEnd::kAnswered:
      break;
  }
  return "";
}

void WarmUpTorch() { StartTorchServer(); }

std::string SignalName(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

std::string TriedCandidate(const std::optional<ProgressEvent>& progress) {
  return progress && progress->kind == ProgressEvent::Kind::kTrying ? progress->text : std::string();
}

long CandidateIndex(const std::optional<ProgressEvent>& progress) {
  return progress && progress->kind == ProgressEvent::Kind::kTrying ? static_cast<long>(progress->done) : -1;
}

ChildOutcome RunModelCheck(ModelCheckOptions options, const ChildLimits& limits, std::vector<CandidateTry>& crashed,
                           double& seconds, std::string* schema, const std::function<void(const ProgressEvent&)>& on_event) {
  constexpr int kFreshChildren = 3;
  auto on_progress = [schema, &on_event](const ProgressEvent& e) {
    if (schema && e.kind == ProgressEvent::Kind::kMethod) *schema = e.text;
    if (on_event) on_event(e);
  };
  for (int fresh = 0;; ++fresh) {
    ChildOutcome child = RunTorchChild(CheckRequest{.options = options}, limits, on_progress);
    seconds += child.seconds;
    const long index = CandidateIndex(child.progress);
    // What a model tries against the sandbox is its own doing, whatever
    // its inputs: never set aside as a guess's crash.
    if (!child.Died() || index < 0 || child.end == ChildEnd::kBlocked) return child;
    const std::string flags = TriedCandidate(child.progress);
    crashed.push_back({flags, child.Failure("running " + options.method)});
    if (fresh == kFreshChildren || child.end == ChildEnd::kTimedOut) return child;
    options.skip_candidates = static_cast<size_t>(index) + 1;
  }
}

}  // namespace tsctl
