// Child processes of tsctl: forked from this (single-threaded) process,
// answering through a pipe of frames, dying with their parent, in a process
// group of their own; and the parent's catching of SIGINT/SIGTERM/SIGHUP
// while it waits for them. The LibTorch door (torch_child.h) and validate's
// parallel workers (--jobs) are built on these.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tsctl {

// A frame: one type byte, a 4-byte little-endian length, the payload.
inline constexpr size_t kFrameHeader = 5;
void WriteFrame(int fd, char type, const std::string& payload);

// The 4-byte little-endian length frames carry (and payloads that hold a
// length-prefixed part), at `at`. Async-signal-safe: a SIGSYS handler writes
// its frame with PutLength.
void PutLength(char* at, uint32_t n);
uint32_t GetLength(const char* at);

// This process's memory from /proc/self/statm, in bytes (0 where unknown):
// its whole address space, and its data (heap and anonymous mappings).
struct ProcessMemory {
  uint64_t size = 0, data = 0;
};
ProcessMemory ReadProcessMemory();

// Takes every complete frame off the front of `buffer`, calling
// on_frame(type, payload) for each; an incomplete one stays.
void TakeFrames(std::string& buffer, const std::function<void(char type, std::string payload)>& on_frame);

// Forks a child that runs body(write_fd) and then _exit(0)s (no static
// destructors: LibTorch's can hang at exit). The child dies with this
// process (PR_SET_PDEATHSIG), leads a process group of its own, and has
// the default dispositions of SIGINT, SIGTERM, SIGHUP and SIGPIPE. Returns
// its pid; *read_fd is the pipe's end to read (close-on-exec). Throws
// tsctl::Error (kIo) if no pipe or process can be made.
pid_t ForkChild(int* read_fd, const std::function<void(int write_fd)>& body);

// Starts the program `path` as a child the way every program tsctl runs
// is started (tsctl-torch-server, tsctl-pte-runner): it dies with this
// process (PR_SET_PDEATHSIG), leads a process group of its own, reads
// /dev/null, writes its stdout and stderr to `out_fd`, gets each
// `fds[i].from` as descriptor `fds[i].to` (without close-on-exec; every
// descriptor above the highest `to` closed), an empty signal mask and the
// default dispositions, and runs with `argv` and `env` (SandboxEnvironment's
// for both). Nothing allocates in the child after fork. If the exec fails,
// the child calls exec_failed(errno) (async-signal-safe code only; may be
// null) and exits 127. Returns the pid, or -1 if fork failed (errno).
struct ChildFd {
  int from, to;
};
pid_t SpawnProgram(const std::string& path, std::vector<std::string> argv, std::vector<std::string> env, int out_fd,
                   const std::vector<ChildFd>& fds, const std::function<void(int err)>& exec_failed);

// One message on a SOCK_SEQPACKET socket (at most 8 KiB), with up to
// kMaxMessageFds descriptors (SCM_RIGHTS); MSG_NOSIGNAL. False if it could
// not be sent.
constexpr size_t kMaxMessageFds = 16;
bool SendMessage(int sock, const std::string& data, const std::vector<int>& fds = {});
// The next message, its descriptors (close-on-exec) appended to *fds (closed
// when fds is nullptr); false at the socket's end or on an error.
bool ReceiveMessage(int sock, std::string& data, std::vector<int>* fds = nullptr);

// Kills the child's process group (and the child), SIGKILL.
void KillGroup(pid_t pid);

// Waits for the child (EINTR retried); its wait status.
int Reap(pid_t pid);

// While it lives, SIGINT, SIGTERM and SIGHUP are caught and written to a
// pipe that a poll loop watches beside its children's pipes; the previous
// handlers are put back after.
class SignalCatcher {
 public:
  SignalCatcher();
  ~SignalCatcher();
  SignalCatcher(const SignalCatcher&) = delete;
  SignalCatcher& operator=(const SignalCatcher&) = delete;
  int fd() const { return fds_[0]; }
  // The signal caught, or 0.
  int Caught() const;

 private:
  int fds_[2] = {-1, -1};
  struct Saved;
  Saved* saved_;
};

}  // namespace tsctl
