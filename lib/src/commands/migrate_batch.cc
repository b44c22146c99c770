// tsctl migrate over many archives: --jobs N converts N at once, each in a
// worker process forked from this one (which started the LibTorch server
// once: every worker's children start from it warm; torch_server.h). A
// worker runs Migrate() as the one-by-one path does, each archive still in
// its own isolated child, and sends the result back whole in the LibTorch
// door's codec (MigrateResult is a ChildValue), so the results come out in
// the order given and the same as with --jobs 1.
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "process.h"
#include "torch_child.h"
#include "torch_child_codec.h"
#include "tsctl/error.h"
#include "tsctl/migrate.h"

namespace tsctl {
namespace {

// A worker's one frame: its result, or the error that stopped it.
constexpr char kAnswerFrame = 'A';

// One archive, as the one-by-one path converts it.
MigrateEntry MigrateOne(const MigrateOptions& options) {
  MigrateEntry e;
  try {
    e.result = Migrate(options);
    e.migrated = true;
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& err) {
    e.error_kind = err.kind();
    e.error = err.what();
    e.error_detail = err.detail();
  } catch (const std::exception& err) {
    e.error = std::string("unexpected error: ") + err.what();
  }
  return e;
}

void WorkerMain(const MigrateOptions& options, int fd) {
  MigrateEntry e;
  try {
    e = MigrateOne(options);
  } catch (const Interrupted&) {
    ::_exit(125);
  }
  WriteFrame(fd, kAnswerFrame,
             e.migrated ? EncodeChildValue(e.result) : EncodeChildError(Error(e.error_kind, e.error, e.error_detail)));
}

struct Worker {
  size_t index = 0;
  int fd = -1;
  std::string buffer;
};

// What a worker sent (or how it died), as its entry.
MigrateEntry Finish(Worker& w, pid_t pid) {
  ::close(w.fd);
  const int status = Reap(pid);
  MigrateEntry e;
  bool answered = false;
  try {
    TakeFrames(w.buffer, [&](char type, std::string payload) {
      if (type != kAnswerFrame) return;
      ChildOutcome answer;
      DecodeChildAnswer(payload, answer);
      answered = true;
      if (answer.end == ChildEnd::kRaised) {
        e.error_kind = answer.error_kind;
        e.error = answer.error;
        e.error_detail = answer.error_detail;
        return;
      }
      e.result = std::move(answer).Take<MigrateResult>("migrating it");
      e.migrated = true;
    });
  } catch (const Error& err) {
    e.migrated = false;
    e.error_kind = err.kind();
    e.error = err.what();
    answered = true;
  }
  if (!answered) {
    e.error_kind = ErrorKind::kIo;
    e.error = WIFSIGNALED(status) ? "the worker migrating it crashed with " + SignalName(WTERMSIG(status))
                                  : "the worker migrating it ended without a result";
  }
  return e;
}

bool StopsAll(const MigrateEntry& e) { return !e.migrated && e.error_kind == ErrorKind::kUnavailable; }

void MigrateInWorkers(std::vector<MigrateOptions> archives, size_t jobs, const MigrateBatchOptions& batch,
                      std::vector<MigrateEntry>& entries) {
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  const int threads = std::max(1, static_cast<int>(cores > 0 ? cores : 1) / static_cast<int>(jobs));
  for (MigrateOptions& o : archives) {
    if (o.torch_threads == 0) o.torch_threads = threads;
  }
  try {
    WarmUpTorch();  // before the first fork: every worker's children come from this server
  } catch (const Error&) {
  }
  SignalCatcher signals;
  std::map<pid_t, Worker> running;
  size_t next = 0, done = 0;
  bool stopped = false;
  while (!running.empty() || (!stopped && next < archives.size())) {
    while (!stopped && running.size() < jobs && next < archives.size()) {
      Worker w;
      w.index = next;
      const MigrateOptions& o = archives[next];
      if (batch.started) batch.started(next);
      pid_t pid = ForkChild(&w.fd, [&](int fd) { WorkerMain(o, fd); });
      running.emplace(pid, std::move(w));
      ++next;
    }
    std::vector<pollfd> fds = {{signals.fd(), POLLIN, 0}};
    std::vector<pid_t> pids;
    for (auto& [pid, w] : running) {
      fds.push_back({w.fd, POLLIN, 0});
      pids.push_back(pid);
    }
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
        w.buffer.append(chunk, static_cast<size_t>(n));
        continue;
      }
      MigrateEntry& e = entries[w.index];
      e = Finish(w, pids[i - 1]);
      if (e.migrated) e.result.path = archives[w.index].path;
      if (StopsAll(e)) stopped = true;
      running.erase(pids[i - 1]);
      if (batch.finished) batch.finished(w.index, e, ++done, archives.size());
    }
  }
}

}  // namespace

std::vector<MigrateEntry> MigrateBatch(const std::vector<MigrateOptions>& archives, const MigrateBatchOptions& batch) {
  std::vector<MigrateEntry> entries(archives.size());
  const size_t jobs = std::min<size_t>(static_cast<size_t>(std::max(batch.jobs, 1)), archives.size());
  if (jobs <= 1) {
    for (size_t i = 0; i < archives.size(); ++i) {
      if (batch.started) batch.started(i);
      entries[i] = MigrateOne(archives[i]);
      if (batch.finished) batch.finished(i, entries[i], i + 1, archives.size());
      if (StopsAll(entries[i])) break;
    }
    return entries;
  }
  MigrateInWorkers(archives, jobs, batch, entries);
  return entries;
}

}  // namespace tsctl
