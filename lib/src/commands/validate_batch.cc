// tsctl validate over several archives: --shard K/N picks a slice of them,
// --jobs N checks N at once, each in a worker process forked from this one
// (which started the LibTorch server once: every worker attaches to it, so
// their LibTorch children start warm; torch_server.h). A worker runs
// ValidateArchive() as the one-by-one path does and sends the report back
// whole (the LibTorch door's CBOR codec: names that are not UTF-8 and
// non-finite numbers kept), so reports come out in input order and the same
// as with --jobs 1.
#include <chrono>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>

#include "process.h"
#include "torch_child.h"
#include "torch_child_codec.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/pt2.h"
#include "tsctl/source.h"
#include "tsctl/validate.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

// A worker's one frame: its report, or the error that stopped it, in the
// LibTorch door's codec (torch_child_codec.h: ArchiveReport is a ChildValue).
constexpr char kAnswerFrame = 'A';

// One archive's check, as the one-by-one path makes it.
BatchEntry CheckOne(const std::string& path, const ValidateOptions& options) {
  BatchEntry e;
  e.path = path;
  try {
    e.report = ValidateArchive(path, options);
    e.checked = true;
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& err) {
    e.error_kind = err.kind();
    e.error = err.what();
    e.error_detail = err.detail();
  } catch (const std::exception& err) {
    e.error_kind = ErrorKind::kIo;
    e.error = std::string("unexpected error: ") + err.what();
  }
  return e;
}

// The worker's side: check, send the report or the error.
void WorkerMain(const std::string& path, const ValidateOptions& options, int fd) {
  BatchEntry e;
  try {
    e = CheckOne(path, options);
  } catch (const Interrupted&) {
    ::_exit(125);
  }
  WriteFrame(fd, kAnswerFrame,
             e.checked ? EncodeChildValue(e.report) : EncodeChildError(Error(e.error_kind, e.error, e.error_detail)));
}

struct Worker {
  size_t index = 0;
  int fd = -1;
  std::string buffer;
  bool answered = false;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// batch.waiting with the worker that started first.
void ReportWaiting(const std::map<pid_t, Worker>& running, const std::vector<std::string>& paths,
                   const ValidateBatchOptions& batch) {
  if (!batch.waiting) return;
  const Worker* oldest = nullptr;
  for (const auto& [pid, w] : running) {
    if (!oldest || w.started < oldest->started) oldest = &w;
  }
  if (!oldest) return batch.waiting("", 0);
  batch.waiting(paths[oldest->index],
                std::chrono::duration<double>(std::chrono::steady_clock::now() - oldest->started).count());
}

// Turns what a worker sent (or how it died) into its entry.
void Finish(Worker& w, pid_t pid, BatchEntry& e) {
  ::close(w.fd);
  const int status = Reap(pid);
  try {
    TakeFrames(w.buffer, [&](char type, std::string payload) {
      if (type != kAnswerFrame) return;
      ChildOutcome answer;
      DecodeChildAnswer(payload, answer);
      w.answered = true;
      if (answer.end == ChildEnd::kRaised) {
        e.error_kind = answer.error_kind;
        e.error = answer.error;
        e.error_detail = answer.error_detail;
        return;
      }
      e.report = std::move(answer).Take<ArchiveReport>("checking it");
      e.checked = true;
    });
  } catch (const Error& err) {
    e.checked = false;
    e.error_kind = err.kind();
    e.error = err.what();
    w.answered = true;
  }
  if (!w.answered) {
    e.error_kind = ErrorKind::kIo;
    e.error = WIFSIGNALED(status) ? "the worker checking it crashed with " + SignalName(WTERMSIG(status))
                                  : "the worker checking it ended without a report";
  }
}

}  // namespace

int DefaultValidateJobs() {
  long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? static_cast<int>(cores) : 1;
}

std::pair<int, int> ParseShard(const std::string& text) {
  size_t slash = text.find('/');
  int k = 0, n = 0;
  try {
    size_t used_k = 0, used_n = 0;
    if (slash == std::string::npos) throw std::invalid_argument(text);
    k = std::stoi(text.substr(0, slash), &used_k);
    n = std::stoi(text.substr(slash + 1), &used_n);
    if (used_k != slash || used_n != text.size() - slash - 1) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    throw Error(ErrorKind::kUsage, "--shard wants K/N (the K-th of N slices, 1 <= K <= N), got '" + text + "'");
  }
  if (n < 1 || k < 1 || k > n) {
    throw Error(ErrorKind::kUsage, "--shard wants K/N with 1 <= K <= N, got '" + text + "'");
  }
  return {k, n};
}

std::vector<std::string> ShardOf(const std::vector<std::string>& items, int k, int n) {
  std::vector<std::string> out;
  for (size_t i = static_cast<size_t>(k - 1); i < items.size(); i += static_cast<size_t>(n)) out.push_back(items[i]);
  return out;
}

namespace {

// The rules between validate's options: usage errors before any archive is read.
void RequireCompatibleOptions(const ValidateOptions& o) {
  if (!o.reference_model_path.empty()) {
    if (!o.reference_path.empty()) throw Error(ErrorKind::kUsage, "--reference-model cannot be combined with --reference");
    if (o.record_reference) throw Error(ErrorKind::kUsage, "--reference-model cannot be combined with --record-reference");
    if (!o.load || !o.run) throw Error(ErrorKind::kUsage, "--reference-model needs to load and run both models");
    if (o.method == "all") throw Error(ErrorKind::kUsage, "--reference-model compares one method: give -m METHOD, not all");
  } else if (o.compare_intermediates) {
    throw Error(ErrorKind::kUsage, "--compare-intermediates compares with a reference model: give --reference-model B");
  }
  if ((o.record_reference || !o.save_reference_path.empty()) && (!o.load || !o.run)) {
    throw Error(ErrorKind::kUsage, "--record-reference needs to load and run the model");
  }
}

// A reference model that cannot be used fails the command once, not each
// archive; the error names it.
void RequireReferenceModel(const std::string& path) {
  try {
    RequireRegularFile(path, "LibTorch loads");
    if (IsPt2(Archive::OpenSoundModel(path).kind())) {
      throw Error(ErrorKind::kUsage, "--reference-model takes a TorchScript archive, not a .pt2: write the .pt2's outputs "
                                     "with `tsctl validate B.pt2 --save-reference FILE` and pass --reference FILE");
    }
    Archive::OpenSound(path);
  } catch (const Error& e) {
    throw Error(e.kind(), path + ": " + e.what(), e.detail());
  }
}

// The archives checked in `jobs` children forked from this process at once
// (each starts a LibTorch server of its own), each report written into its own place in `entries` (input order).
void ValidateInWorkers(const std::vector<std::string>& paths, ValidateOptions options, size_t jobs,
                       const ValidateBatchOptions& batch, std::vector<BatchEntry>& entries) {
  // Children side by side share the cores: LibTorch's threads split them.
  options.torch_threads = std::max(1, DefaultValidateJobs() / static_cast<int>(jobs));
  if (options.load) {
    try {
      WarmUpTorch();  // before the first fork: every worker attaches to this server
    } catch (const Error&) {
    }
  }
  SignalCatcher signals;
  std::map<pid_t, Worker> running;
  size_t next = 0, done = 0;
  auto stop_all = [&] {
    for (auto& [pid, w] : running) {
      KillGroup(pid);
      Reap(pid);
      ::close(w.fd);
    }
  };
  while (done < paths.size()) {
    while (running.size() < jobs && next < paths.size()) {
      Worker w;
      w.index = next;
      const std::string& path = paths[next];
      pid_t pid = ForkChild(&w.fd, [&](int fd) { WorkerMain(path, options, fd); });
      running.emplace(pid, std::move(w));
      ++next;
    }
    std::vector<pollfd> fds = {{signals.fd(), POLLIN, 0}};
    std::vector<pid_t> pids;
    for (auto& [pid, w] : running) {
      fds.push_back({w.fd, POLLIN, 0});
      pids.push_back(pid);
    }
    ReportWaiting(running, paths, batch);
    if (::poll(fds.data(), fds.size(), 1000) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      if (int sig = signals.Caught()) {
        stop_all();
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
      Finish(w, pids[i - 1], entries[w.index]);  // EOF: the worker is done
      entries[w.index].path = paths[w.index];
      running.erase(pids[i - 1]);
      ++done;
      if (batch.progress) batch.progress(done, paths.size());
    }
  }
}

}  // namespace

std::vector<BatchEntry> ValidateBatch(const std::vector<std::string>& paths, ValidateOptions options,
                                      const ValidateBatchOptions& batch) {
  RequireDeviceName(options.device);
  RequireCompatibleOptions(options);
  if (!options.reference_model_path.empty()) RequireReferenceModel(options.reference_model_path);
  // The data loader runs once; every archive loads its first argument set.
  std::unique_ptr<TempFile> loaded;
  if (!options.data_loader.empty() && options.load && options.run) {
    RequireOneDataSource(!options.inputs.empty() || !options.args.empty(), options.load_inputs_path);
    loaded = RunDataLoader(options.data_loader, options.timeout_seconds > 0 ? options.timeout_seconds : ValidateTimeout(0));
    options.load_inputs_path = loaded->path;
  }
  std::vector<BatchEntry> entries(paths.size());
  size_t jobs = std::min<size_t>(std::max(batch.jobs, 1), paths.size());
  // One file that every archive's run writes: one after another, the last wins.
  if (!options.save_outputs_path.empty() || !options.save_reference_path.empty()) jobs = 1;
  if (jobs <= 1) {
    for (size_t i = 0; i < paths.size(); ++i) {
      if (batch.waiting) batch.waiting(paths[i], 0);
      entries[i] = CheckOne(paths[i], options);
      if (batch.progress) batch.progress(i + 1, paths.size());
    }
    return entries;
  }
  ValidateInWorkers(paths, options, jobs, batch, entries);
  return entries;
}

}  // namespace tsctl
