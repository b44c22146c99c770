// N jobs at a time, each in a worker process forked from this one, for the
// commands that take many archives (validate --jobs, migrate --jobs): a
// worker sends one answer frame in the LibTorch door's codec (a ChildValue
// or an error); the parent collects each whole, in whatever order workers
// end, and hands it on under the job's index.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <functional>
#include <string>

#include "process.h"
#include "torch_child.h"
#include "torch_child_codec.h"
#include "tsctl/error.h"

namespace tsctl {

// A worker's one frame: its result, or the error that stopped it.
inline constexpr char kWorkerAnswerFrame = 'A';

struct WorkerPool {
  size_t count = 0;  // jobs 0 .. count-1, started in that order
  size_t jobs = 1;   // at most this many at once
  // In the worker: do job `index`, write one kWorkerAnswerFrame to `fd`.
  std::function<void(size_t index, int fd)> work;
  // In this process, as a job starts (optional).
  std::function<void(size_t index)> started;
  // Job `index` ended: what it sent (frames) and its wait status. Returns
  // true to start no further job (those running are still collected).
  std::function<bool(size_t index, std::string& sent, int status)> finished;
  // About once a second while jobs run: the one waited on longest and for
  // how long (optional).
  std::function<void(size_t index, double seconds)> waiting;
};

// Runs the pool to its end. Throws tsctl::Interrupted (after killing and
// reaping every worker) if this process gets SIGINT, SIGTERM or SIGHUP.
void RunInWorkers(const WorkerPool& pool);

// What a job's worker answered, as its caller keeps it.
template <class T>
struct WorkerAnswer {
  bool ok = false;
  T value{};
  ErrorKind error_kind = ErrorKind::kIo;
  std::string error, error_detail;
};

// `sent` and `status` (WorkerPool::finished) read as a WorkerAnswer<T>;
// a worker that sent nothing "crashed with SIGNAL" or "ended without
// `missing`", in the words "the worker `doing` ...".
template <class T>
WorkerAnswer<T> TakeWorkerAnswer(std::string& sent, int status, const std::string& doing, const std::string& missing) {
  WorkerAnswer<T> a;
  bool answered = false;
  try {
    TakeFrames(sent, [&](char type, std::string payload) {
      if (type != kWorkerAnswerFrame) return;
      ChildOutcome answer;
      DecodeChildAnswer(payload, answer);
      answered = true;
      if (answer.end == ChildEnd::kRaised) {
        a.error_kind = answer.error_kind;
        a.error = answer.error;
        a.error_detail = answer.error_detail;
        return;
      }
      a.value = std::move(answer).Take<T>(doing);
      a.ok = true;
    });
  } catch (const Error& err) {
    a.ok = false;
    a.error_kind = err.kind();
    a.error = err.what();
    answered = true;
  }
  if (!answered) {
    a.error_kind = ErrorKind::kIo;
    a.error = WIFSIGNALED(status) ? "the worker " + doing + " crashed with " + SignalName(WTERMSIG(status))
                                  : "the worker " + doing + " ended without " + missing;
  }
  return a;
}

// `work()`, one job of a batch, as WorkerAnswer<T>: its value, or the
// tsctl::Error it threw (another exception: "unexpected error: ...", kIo);
// tsctl::Interrupted passes through.
template <class T, class F>
WorkerAnswer<T> AnswerOf(F work) {
  WorkerAnswer<T> a;
  try {
    a.value = work();
    a.ok = true;
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& err) {
    a.error_kind = err.kind();
    a.error = err.what();
    a.error_detail = err.detail();
  } catch (const std::exception& err) {
    a.error = std::string("unexpected error: ") + err.what();
  }
  return a;
}

// In a worker (WorkerPool::work): AnswerOf(work) as its one
// kWorkerAnswerFrame to `fd`; interrupted, it exits 125.
template <class T, class F>
void AnswerInWorker(int fd, F work) {
  WorkerAnswer<T> a;
  try {
    a = AnswerOf<T>(work);
  } catch (const Interrupted&) {
    ::_exit(125);
  }
  WriteFrame(fd, kWorkerAnswerFrame,
             a.ok ? EncodeChildValue(a.value) : EncodeChildError(Error(a.error_kind, a.error, a.error_detail)));
}

}  // namespace tsctl
