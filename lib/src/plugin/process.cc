#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "tsctl/error.h"

namespace tsctl {
namespace {

constexpr int kCaughtSignals[] = {SIGINT, SIGTERM, SIGHUP};

void WriteAll(int fd, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

int g_signal_pipe = -1;

void OnSignal(int sig) {
  const int saved = errno;
  const char c = static_cast<char>(sig);
  if (g_signal_pipe >= 0) (void)!::write(g_signal_pipe, &c, 1);
  errno = saved;
}

}  // namespace

void PutLength(char* at, uint32_t n) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<char>((n >> (8 * i)) & 0xff);
}

uint32_t GetLength(const char* at) {
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(static_cast<unsigned char>(at[i])) << (8 * i);
  return n;
}

ProcessMemory ReadProcessMemory() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0, shared = 0, text = 0, lib = 0, data = 0;
  if (!(statm >> size >> resident >> shared >> text >> lib >> data)) return {};
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE));
  return {size * page, data * page};
}

void WriteFrame(int fd, char type, const std::string& payload) {
  char header[kFrameHeader] = {type};
  PutLength(header + 1, static_cast<uint32_t>(payload.size()));
  WriteAll(fd, header, sizeof header);
  WriteAll(fd, payload.data(), payload.size());
}

void TakeFrames(std::string& buffer, const std::function<void(char type, std::string payload)>& on_frame) {
  size_t pos = 0;
  while (buffer.size() - pos >= kFrameHeader) {
    const uint32_t n = GetLength(buffer.data() + pos + 1);
    if (buffer.size() - pos - kFrameHeader < n) break;
    on_frame(buffer[pos], buffer.substr(pos + kFrameHeader, n));
    pos += kFrameHeader + n;
  }
  buffer.erase(0, pos);
}

pid_t ForkChild(int* read_fd, const std::function<void(int write_fd)>& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(ErrorKind::kIo, std::string("pipe: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(ErrorKind::kIo, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // Dies with its parent, whatever kills that; a parent already gone
    // means nobody waits for the answer.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);
    // Its own process group: the parent kills the whole group (anything the
    // model started too); a terminal's Ctrl-C reaches the parent, which
    // passes it on.
    ::setpgid(0, 0);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
    g_signal_pipe = -1;
    body(fds[1]);
    ::close(fds[1]);
    ::_exit(0);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first
  ::close(fds[1]);
  *read_fd = fds[0];
  return pid;
}

pid_t SpawnProgram(const std::string& path, std::vector<std::string> argv, std::vector<std::string> env, int out_fd,
                   const std::vector<ChildFd>& fds, const std::function<void(int err)>& exec_failed) {
  std::vector<char*> args, envp;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  int highest = STDERR_FILENO;
  for (const ChildFd& f : fds) highest = std::max(highest, f.to);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // The child: nothing that allocates from here on (the parent may have threads).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(125);
  ::setpgid(0, 0);  // a terminal's Ctrl-C reaches tsctl, which ends its children
  // Each source above every target first, so that no dup2 below overwrites
  // a source still to be moved (a source may be 3 and another's target 3).
  int moved[16];
  const size_t n = std::min(fds.size(), sizeof moved / sizeof moved[0]);
  for (size_t i = 0; i < n; ++i) moved[i] = ::fcntl(fds[i].from, F_DUPFD, highest + 1);
  const int null = ::open("/dev/null", O_RDWR);
  ::dup2(null, STDIN_FILENO);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(out_fd, STDERR_FILENO);
  for (size_t i = 0; i < n; ++i) ::dup2(moved[i], fds[i].to);
  ::close_range(static_cast<unsigned>(highest) + 1, ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::signal(sig, SIG_DFL);
  ::execve(path.c_str(), args.data(), envp.data());
  if (exec_failed) exec_failed(errno);
  ::_exit(127);
}

bool SendMessage(int sock, const std::string& data, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(data.data()), data.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxMessageFds)] = {};
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  while (::sendmsg(sock, &msg, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

bool ReceiveMessage(int sock, std::string& data, std::vector<int>* fds) {
  char buf[8192];  // the longest message: a line or a BuildInfo
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxMessageFds)];
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  data.assign(buf, static_cast<size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    std::vector<int> got(count);
    std::memcpy(got.data(), CMSG_DATA(c), count * sizeof(int));
    for (int fd : got) {
      if (fds) fds->push_back(fd);
      else ::close(fd);
    }
  }
  return true;
}

void KillGroup(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

int Reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

struct SignalCatcher::Saved {
  struct sigaction old[std::size(kCaughtSignals)];
  int pipe = -1;  // an outer catcher's
};

SignalCatcher::SignalCatcher() : saved_(new Saved{}) {
  if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
    delete saved_;
    throw Error(ErrorKind::kIo, std::string("pipe: ") + std::strerror(errno));
  }
  saved_->pipe = g_signal_pipe;
  g_signal_pipe = fds_[1];
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kCaughtSignals); ++i) ::sigaction(kCaughtSignals[i], &sa, &saved_->old[i]);
}

SignalCatcher::~SignalCatcher() {
  for (size_t i = 0; i < std::size(kCaughtSignals); ++i) ::sigaction(kCaughtSignals[i], &saved_->old[i], nullptr);
  g_signal_pipe = saved_->pipe;
  ::close(fds_[0]);
  ::close(fds_[1]);
  delete saved_;
}

int SignalCatcher::Caught() const {
  char c = 0;
  return ::read(fds_[0], &c, 1) == 1 ? c : 0;
}

}  // namespace tsctl
