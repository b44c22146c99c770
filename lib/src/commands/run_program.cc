// RunProgram (run_program.h): fork and exec with memory files for the
// standard streams, so that a program that writes much and reads much cannot
// fill a pipe while tsctl writes to the other, and nothing touches $TMPDIR.
#include "run_program.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "tsctl/error.h"

namespace tsctl {
namespace {

struct MemFile {
  int fd = -1;
  explicit MemFile(const char* name) : fd(::memfd_create(name, MFD_CLOEXEC)) {
    if (fd < 0) throw Error(ErrorKind::kIo, std::string("memfd_create: ") + std::strerror(errno));
  }
  ~MemFile() {
    if (fd >= 0) ::close(fd);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  void Write(const std::string& s) const {
    for (size_t at = 0; at < s.size();) {
      const ssize_t n = ::write(fd, s.data() + at, s.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error(ErrorKind::kIo, std::string("writing a memory file: ") + std::strerror(errno));
      at += static_cast<size_t>(n);
    }
    ::lseek(fd, 0, SEEK_SET);
  }
  std::string Read(size_t max) const {
    std::string out;
    ::lseek(fd, 0, SEEK_SET);
    char buf[1 << 16];
    while (out.size() < max) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buf, std::min(static_cast<size_t>(n), max - out.size()));
    }
    return out;
  }
};

// In the child: the streams, its own group, death with the parent, exec.
[[noreturn]] void Exec(const std::vector<std::string>& argv, const MemFile& in, const MemFile& out,
                       const MemFile& err, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(125);
  ::setpgid(0, 0);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
  if (::dup2(in.fd, 0) < 0 || ::dup2(out.fd, 1) < 0 || ::dup2(err.fd, 2) < 0) ::_exit(126);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  ::_exit(errno == ENOENT ? 127 : 126);
}

}  // namespace

ProgramRun RunProgram(const std::vector<std::string>& argv, const std::string& input, double timeout_seconds,
                      size_t max_output) {
  ProgramRun run;
  MemFile in("tsctl-in"), out("tsctl-out"), err("tsctl-err");
  in.Write(input);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(ErrorKind::kIo, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) Exec(argv, in, out, err, parent);
  ::setpgid(pid, pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      run.timed_out = true;
      break;
    }
    const timespec pause{0, 2'000'000};  // 2 ms
    ::nanosleep(&pause, nullptr);
  }
  if (!run.timed_out && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  run.out = out.Read(max_output);
  run.err = err.Read(max_output);
  run.started = !(run.exit_code == 127 || run.exit_code == 126) || !run.err.empty();
  if (run.exit_code == 127 && run.err.empty()) run.error = argv[0] + ": not found";
  if (run.exit_code == 126 && run.err.empty()) run.error = argv[0] + ": cannot be run";
  return run;
}

}  // namespace tsctl
