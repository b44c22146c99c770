#include "isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "tsctl/error.h"

namespace tsctl {
namespace {

void WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

IsolatedResult RunIsolated(const std::function<std::string()>& fn, double timeout_seconds) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(ErrorKind::kIo, std::string("pipe: ") + std::strerror(errno));
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(ErrorKind::kIo, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // First byte: 'R' result, 'E' error: then one digit, the ErrorKind,
    // and the message.
    std::string out;
    try {
      out = "R" + fn();
    } catch (const Error& e) {
      out = std::string("E") + static_cast<char>('0' + static_cast<int>(e.kind())) + e.what();
    } catch (const std::exception& e) {
      out = std::string("E") + static_cast<char>('0' + static_cast<int>(ErrorKind::kTorch)) + e.what();
    }
    WriteAll(fds[1], out);
    ::close(fds[1]);
    ::_exit(0);  // skip static destructors: LibTorch's can hang at exit
  }
  ::close(fds[1]);
  IsolatedResult result;
  std::string data;
  char buf[65536];
  auto deadline = start + std::chrono::duration<double>(timeout_seconds);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed the pipe (finished or died)
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result.timed_out) return result;
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    return result;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    result.exit_code = WEXITSTATUS(status);
    return result;
  }
  if (data.empty()) {
    result.error = "the child process returned nothing";
  } else if (data[0] == 'E' && data.size() >= 2 && data[1] >= '0' &&
             data[1] <= '0' + static_cast<int>(ErrorKind::kUnavailable)) {
    result.error_kind = static_cast<ErrorKind>(data[1] - '0');
    result.error = data.substr(2);
  } else if (data[0] != 'R') {
    result.error = "the child process returned a malformed result";
  } else {
    result.ok = true;
    result.output = data.substr(1);
  }
  return result;
}

}  // namespace tsctl
