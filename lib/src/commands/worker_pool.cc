#include "worker_pool.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <vector>

namespace tsctl {
namespace {

struct Worker {
  size_t index = 0;
  int fd = -1;
  std::string sent;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// pool.waiting with the worker that started first.
void ReportWaiting(const std::map<pid_t, Worker>& running, const WorkerPool& pool) {
  if (!pool.waiting || running.empty()) return;
  const Worker* oldest = nullptr;
  for (const auto& [pid, w] : running) {
    if (!oldest || w.started < oldest->started) oldest = &w;
  }
  pool.waiting(oldest->index, std::chrono::duration<double>(std::chrono::steady_clock::now() - oldest->started).count());
}

}  // namespace

void RunInWorkers(const WorkerPool& pool) {
  SignalCatcher signals;
  std::map<pid_t, Worker> running;
  size_t next = 0;
  bool stopped = false;
  while (!running.empty() || (!stopped && next < pool.count)) {
    while (!stopped && running.size() < pool.jobs && next < pool.count) {
      Worker w;
      w.index = next;
      if (pool.started) pool.started(next);
      const size_t index = next;
      pid_t pid = ForkChild(&w.fd, [&](int fd) { pool.work(index, fd); });
      running.emplace(pid, std::move(w));
      ++next;
    }
    std::vector<pollfd> fds = {{signals.fd(), POLLIN, 0}};
    std::vector<pid_t> pids;
    for (auto& [pid, w] : running) {
      fds.push_back({w.fd, POLLIN, 0});
      pids.push_back(pid);
    }
    ReportWaiting(running, pool);
    if (::poll(fds.data(), fds.size(), 1000) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      if (int sig = signals.Caught()) {
        for (auto& [pid, w] : running) {
          KillGroup(pid);
          Reap(pid);
          ::close(w.fd);
        }
        throw Interrupted(sig);
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& w = running.at(pids[i - 1]);
      char chunk[65536];
      ssize_t n = ::read(w.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        w.sent.append(chunk, static_cast<size_t>(n));
        continue;
      }
      // EOF: the worker is done.
      ::close(w.fd);
      const int status = Reap(pids[i - 1]);
      Worker ended = std::move(w);
      running.erase(pids[i - 1]);
      if (pool.finished(ended.index, ended.sent, status)) stopped = true;
    }
  }
}

}  // namespace tsctl
