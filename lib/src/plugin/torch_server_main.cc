// tsctl-torch-server: the LibTorch server (torch_server.h), started by
// libtsctl with its first channel as descriptor 3 and a pipe to tsctl as its
// standard output and error; never by hand. It loads
// the plugin, says it is ready, then forks a child per "spawn" and tells
// the channel that asked how each ended.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "plugin_abi.h"
#include "process.h"
#include "torch_child_codec.h"
#include "torch_server.h"
#include "torch_server_protocol.h"

namespace tsctl {
namespace {

// The descriptors a spawn carries before the named ones: the request
// socket, the answer pipe, the output pipe.
constexpr size_t kFixedFds = 3;

// In the forked child: its descriptors above every number the request
// names, the output pipe as its standard output and error (so whatever any
// of its threads writes reaches tsctl, which bounds and escapes it), the
// named ones at their numbers; the request read; the work done.
[[noreturn]] void ChildOfServer(std::vector<int> fds, const std::vector<int>& numbers) {
  int floor = 10;
  for (int n : numbers) floor = std::max(floor, n + 1);
  for (int& fd : fds) {
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, floor);
    ::close(fd);
    fd = moved;
  }
  if (::dup2(fds[2], STDOUT_FILENO) < 0 || ::dup2(fds[2], STDERR_FILENO) < 0) ::_exit(126);
  ::close(fds[2]);
  for (size_t i = 0; i < numbers.size() && i + kFixedFds < fds.size(); ++i) {
    if (numbers[i] > STDERR_FILENO) ::dup2(fds[i + kFixedFds], numbers[i]);
    ::close(fds[i + kFixedFds]);
  }
  std::string request;
  char header[4];
  auto read_exactly = [&](char* into, size_t size) {
    for (size_t got = 0; got < size;) {
      const ssize_t n = ::read(fds[0], into + got, size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      got += static_cast<size_t>(n);
    }
    return true;
  };
  if (read_exactly(header, 4)) {
    request.resize(GetLength(header));
    if (!read_exactly(request.data(), request.size())) request.clear();
  }
  ::close(fds[0]);
  if (!request.empty()) ServeChildLaunch(request, fds[1]);
  ::close(fds[1]);
  ::_exit(0);
}

// What the server keeps: its channels to tsctl (the first is the one it
// was started with; a validate --jobs worker attaches one of its own) and
// which channel asked for each living child.
struct Channels {
  std::vector<int> fds;
  std::map<pid_t, int> asked_by;
  int sigchld = -1;
};

void Spawn(Channels& ch, int channel, const std::string& message, std::vector<int>& fds) {
  std::vector<int> numbers;
  for (size_t i = 1; i + 4 <= message.size(); i += 4) numbers.push_back(static_cast<int>(GetLength(message.data() + i)));
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (int fd : ch.fds) ::close(fd);
    ::close(ch.sigchld);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::setpgid(0, 0);  // the parent kills the whole group (anything the model started too)
    ChildOfServer(std::move(fds), numbers);
  }
  if (pid > 0) ::setpgid(pid, pid);  // as the child does: whichever runs first
  for (int fd : fds) ::close(fd);
  if (pid < 0) {
    SendMessage(channel, std::string(1, kFailed) + "the LibTorch server could not fork: " + std::strerror(errno));
    return;
  }
  ch.asked_by[pid] = channel;
  SendMessage(channel, WithNumbers(kChild, {static_cast<uint32_t>(pid)}));
}

// Each child that ended, told to the channel that asked for it.
void ReapChildren(Channels& ch) {
  signalfd_siginfo info;
  while (::read(ch.sigchld, &info, sizeof info) > 0) {
  }
  int status = 0;
  for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
    auto it = ch.asked_by.find(pid);
    if (it == ch.asked_by.end()) continue;
    SendMessage(it->second, WithNumbers(kEnded, {static_cast<uint32_t>(pid), static_cast<uint32_t>(status)}));
    ch.asked_by.erase(it);
  }
}

// One message on channel `k`; false when the server should end (its first
// channel closed: tsctl is gone, and the children with the server).
bool Serve(Channels& ch, size_t k) {
  const int channel = ch.fds[k];
  std::string message;
  std::vector<int> fds;
  if (!ReceiveMessage(channel, message, &fds)) {
    if (k == 0) return false;
    // A worker gone: its children too.
    for (const auto& [pid, by] : ch.asked_by) {
      if (by == channel) KillGroup(pid);
    }
    ::close(channel);
    ch.fds.erase(ch.fds.begin() + static_cast<long>(k));
    return true;
  }
  if (!message.empty() && message[0] == kAttach && fds.size() == 1) {
    ch.fds.push_back(fds[0]);
  } else if (!message.empty() && message[0] == kSpawn && fds.size() >= kFixedFds) {
    Spawn(ch, channel, message, fds);
  } else {
    for (int fd : fds) ::close(fd);
  }
  return true;
}

}  // namespace

int ServerMain(int control) {
  try {
    const TorchBackend& backend = LoadTorchPlugin();
    backend.PrepareForFork();
    SendMessage(control, WithNumbers(kReady, {kServerProtocol}) + EncodeBuildInfo(backend.StaticInfo()));
  } catch (const std::exception& e) {
    SendMessage(control, std::string(1, kFailed) + e.what());
    return 1;
  }
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  Channels ch;
  ch.fds = {control};
  ch.sigchld = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  while (true) {
    std::vector<pollfd> p = {{ch.sigchld, POLLIN, 0}};
    for (int fd : ch.fds) p.push_back({fd, POLLIN, 0});
    if (::poll(p.data(), p.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (p[0].revents & POLLIN) ReapChildren(ch);
    // From the last: Serve may drop the channel it read.
    for (size_t k = ch.fds.size(); k-- > 0;) {
      if (!(p[k + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (!Serve(ch, k)) return 0;
    }
  }
}

}  // namespace tsctl

int main() {
  if (::fcntl(tsctl::kServerControlFd, F_GETFD) < 0) {
    std::fprintf(stderr, "tsctl-torch-server: started by tsctl, not by hand\n");
    return 2;
  }
  return tsctl::ServerMain(tsctl::kServerControlFd);
}
