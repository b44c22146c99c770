#include "torch_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "child_output.h"
#include "plugin_abi.h"
#include "process.h"
#include "sandbox.h"
#include "torch_child_codec.h"
#include "torch_server_protocol.h"
#include "tsctl/error.h"

extern char** environ;

namespace tsctl {
namespace {

// How long the parent waits for the server to answer, and for the end of
// a child it killed or that closed its pipe.
constexpr double kServerStartSeconds = 300, kServerWordSeconds = 30;

// ---- The parent's side.

struct Server {
  pid_t owner = 0;  // the process whose channel `control` is (a forked --jobs worker attaches its own)
  bool own = false;  // `owner` started it (else it attached to its parent's)
  pid_t pid = -1;
  int control = -1;
  int output = -1;  // the server's standard output and error (non-blocking; never the child's)
  BuildInfo info;
  std::string failure;  // why it could not start: said again to every later caller
  std::map<pid_t, int> ended;  // ends that came while the parent waited for another word
};
Server g_server;

// What the server wrote (its own text: the plugin's loading, LibTorch's
// start-up; never a model's, which goes to each child's pipe), shown with -v.
// The server's end is non-blocking: it never waits for tsctl to read, and
// what does not fit in the pipe meanwhile is lost. Closed at its end.
void DrainServerOutput() {
  if (g_server.output < 0) return;
  ChildOutput text;
  const ChildOutput::Pipe pipe = text.Drain(g_server.output);
  ShowChildOutput(text, "tsctl: LibTorch server: ");
  if (pipe == ChildOutput::Pipe::kEnded) {
    ::close(g_server.output);
    g_server.output = -1;
  }
}

// At this process's exit, the server it started ends and is reaped here,
// not left to init (a process forked from it, a --jobs worker, leaves by
// _exit and attached only a channel).
struct ServerReaper {
  ~ServerReaper() {
    if (!g_server.own || g_server.owner != ::getpid() || g_server.pid <= 0) return;
    DrainServerOutput();
    if (g_server.control >= 0) ::close(g_server.control);
    ::kill(g_server.pid, SIGKILL);
    Reap(g_server.pid);
  }
};
ServerReaper g_reaper;

// The next word from the server within `seconds`, but a child's end, which
// is filed in g_server.ended (skip_ends) or filed and returned; nullopt if
// none came.
std::optional<std::string> NextWord(double seconds, bool skip_ends = true) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd p[2] = {{g_server.control, POLLIN, 0}, {g_server.output, POLLIN, 0}};
    const int r = ::poll(p, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (r <= 0) continue;
    if (p[1].revents) DrainServerOutput();
    if (!p[0].revents) continue;
    std::string word;
    if (!ReceiveMessage(g_server.control, word) || word.empty()) return std::nullopt;
    if (word[0] == kEnded && word.size() >= 9) {
      g_server.ended[static_cast<pid_t>(GetLength(word.data() + 1))] = static_cast<int>(GetLength(word.data() + 5));
      if (skip_ends) continue;
    }
    return word;
  }
}

void Launch(const std::string& path) {
  int sv[2], out[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    throw Error(ErrorKind::kIo, std::string("socketpair: ") + std::strerror(errno));
  }
  if (::pipe2(out, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw Error(ErrorKind::kIo, std::string("pipe: ") + std::strerror(errno));
  }
  char failed[512];
  std::snprintf(failed, sizeof failed, "%ccannot start the LibTorch server %s: ", kFailed, path.c_str());
  const pid_t pid = SpawnProgram(path, {"tsctl-torch-server"}, SandboxEnvironment(), out[1], {{sv[1], kServerControlFd}},
                                 [&failed](int err) {
                                   const char* why = std::strerror(err);
                                   char line[1024];
                                   const size_t n = std::strlen(failed), m = std::min(std::strlen(why), sizeof line - n - 1);
                                   std::memcpy(line, failed, n);
                                   std::memcpy(line + n, why, m);
                                   ::send(kServerControlFd, line, n + m, MSG_NOSIGNAL);
                                 });
  ::close(sv[1]);
  ::close(out[1]);
  if (pid < 0) {
    ::close(sv[0]);
    ::close(out[0]);
    throw Error(ErrorKind::kIo, std::string("fork: ") + std::strerror(errno));
  }
  g_server.pid = pid;
  g_server.control = sv[0];
  g_server.output = out[0];
  g_server.own = true;
}

// In a process forked from the one whose server `g_server` is (a validate
// --jobs worker): a channel of its own to that server, whose children are
// then warm too. False if the server is gone.
bool Attach() {
  int sv[2];
  const int inherited = g_server.control;
  g_server.control = -1;
  g_server.ended.clear();
  if (g_server.output >= 0) ::close(g_server.output);  // the parent reads the server's text
  g_server.output = -1;
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    ::close(inherited);
    return false;
  }
  const bool sent = SendMessage(inherited, std::string(1, kAttach), {sv[1]});
  ::close(sv[1]);
  ::close(inherited);  // the parent's channel
  if (!sent) {
    ::close(sv[0]);
    return false;
  }
  g_server.control = sv[0];
  g_server.owner = ::getpid();
  g_server.own = false;
  return true;
}

// Ends this process's use of the server; `failure` (if not "") is said
// again to every later caller, else the next one starts a fresh server.
void Shut(const std::string& failure) {
  if (g_server.own && g_server.pid > 0) {
    ::kill(g_server.pid, SIGKILL);
    Reap(g_server.pid);
  }
  DrainServerOutput();  // why it failed, where it said so (with -v)
  if (g_server.control >= 0) ::close(g_server.control);
  if (g_server.output >= 0) ::close(g_server.output);
  g_server.pid = -1;
  g_server.control = -1;
  g_server.output = -1;
  g_server.failure = failure;
}

}  // namespace

std::vector<std::string> WholeEnvironment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

void StartTorchServer() {
  const pid_t self = ::getpid();
  if (g_server.owner == self) {
    if (!g_server.failure.empty()) throw Error(ErrorKind::kUnavailable, g_server.failure);
    if (g_server.control >= 0) return;
  }
  if (g_server.owner != self && g_server.control >= 0 && g_server.failure.empty() && Attach()) return;
  g_server = Server{};
  g_server.owner = self;
  RequireLibTorchAllowed();
  Launch(TorchServerPath());
  std::optional<std::string> word = NextWord(kServerStartSeconds);
  if (!word || (*word)[0] != kReady) {
    std::string why = word && (*word)[0] == kFailed ? word->substr(1) : "the LibTorch server ended before it was ready";
    Shut(why);
    throw Error(ErrorKind::kUnavailable, why);
  }
  try {
    if (word->size() < 5 || GetLength(word->data() + 1) != kServerProtocol) {
      throw Error(ErrorKind::kUnavailable, "the LibTorch server " + TorchServerPath() + " speaks another protocol than this tsctl (" +
                                               std::to_string(kServerProtocol) + "); install them together");
    }
    g_server.info = DecodeBuildInfo(word->substr(5));
  } catch (const Error& e) {
    Shut(e.what());
    throw Error(ErrorKind::kUnavailable, e.what());
  }
}

const BuildInfo& ServerInfo() {
  StartTorchServer();
  return g_server.info;
}

const BuildInfo* StartedServerInfo() {
  return g_server.owner == ::getpid() && g_server.control >= 0 ? &g_server.info : nullptr;
}

namespace {

// The pipe a child's standard output and error write to: the child's end
// blocks (it waits while tsctl reads), tsctl's end does not.
void OutputPipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(ErrorKind::kIo, std::string("pipe: ") + std::strerror(errno));
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
}

// The spawn itself: the child's pid and, in *request_fd, the parent's end
// of its request socket; -1 (with `why`) if the server is gone or failed.
pid_t AskForChild(const ChildLaunch& launch, int* request_fd, ChildPipes* pipes, std::string& why) {
  int request[2], answer[2], output[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, request) != 0) {
    throw Error(ErrorKind::kIo, std::string("socketpair: ") + std::strerror(errno));
  }
  if (::pipe2(answer, O_CLOEXEC) != 0) {
    ::close(request[0]);
    ::close(request[1]);
    throw Error(ErrorKind::kIo, std::string("pipe: ") + std::strerror(errno));
  }
  try {
    OutputPipe(output);
  } catch (const Error&) {
    for (int fd : {request[0], request[1], answer[0], answer[1]}) ::close(fd);
    throw;
  }
  std::string spawn(1, kSpawn);
  std::vector<int> fds = {request[1], answer[1], output[1]};
  for (int fd : launch.descriptors) {
    char number[4];
    PutLength(number, static_cast<uint32_t>(fd));
    spawn.append(number, 4);
    fds.push_back(fd);
  }
  const bool sent = SendMessage(g_server.control, spawn, fds);
  ::close(request[1]);
  ::close(answer[1]);
  ::close(output[1]);
  std::optional<std::string> word;
  if (sent) word = NextWord(kServerWordSeconds);
  if (!word || (*word)[0] != kChild || word->size() < 5) {
    ::close(request[0]);
    ::close(answer[0]);
    ::close(output[0]);
    why = word && (*word)[0] == kFailed ? word->substr(1) : "the LibTorch server stopped answering";
    Shut("");  // the next request starts a fresh server (one that died, say, of the OOM killer)
    return -1;
  }
  *request_fd = request[0];
  pipes->answer = answer[0];
  pipes->output = output[0];
  return static_cast<pid_t>(GetLength(word->data() + 1));
}

}  // namespace

pid_t SpawnTorchChild(const ChildLaunch& launch, ChildPipes* pipes) {
  if (launch.descriptors.size() + 3 > kMaxMessageFds) throw Error(ErrorKind::kIo, "too many descriptors for a LibTorch child");
  int request = -1;
  pid_t pid = -1;
  std::string why;
  // A server that died since the last child (killed, or out of memory) is
  // started afresh, once.
  for (int attempt = 0; attempt < 2 && pid < 0; ++attempt) {
    StartTorchServer();
    pid = AskForChild(launch, &request, pipes, why);
  }
  if (pid < 0) throw Error(ErrorKind::kIo, why);
  // The request on the child's own socket (the server never holds it). A
  // child that died first closed its end: its end tells the rest.
  std::string bytes = EncodeChildLaunch(launch);
  char header[4];
  PutLength(header, static_cast<uint32_t>(bytes.size()));
  bytes.insert(0, header, 4);
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::send(request, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(request);
  return pid;
}

int AwaitTorchChild(pid_t pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (g_server.control >= 0) {
    if (auto it = g_server.ended.find(pid); it != g_server.ended.end()) {
      const int status = it->second;
      g_server.ended.erase(it);
      return status;
    }
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || !NextWord(left, false)) return -1;  // ends are filed by NextWord; other words are stale
  }
  return -1;
}

}  // namespace tsctl
