// tsctl migrate over many archives: --jobs N converts N at once, each in a
// worker process forked from this one (which started the LibTorch server
// once: every worker's children start from it warm; torch_server.h). A
// worker runs Migrate() as the one-by-one path does, each archive still in
// its own isolated child, and sends the result back whole in the LibTorch
// door's codec (MigrateResult is a ChildValue), so the results come out in
// the order given and the same as with --jobs 1.
#include <unistd.h>

#include <algorithm>

#include "process.h"
#include "torch_child.h"
#include "torch_child_codec.h"
#include "tsctl/error.h"
#include "tsctl/migrate.h"
#include "worker_pool.h"

namespace tsctl {
namespace {

MigrateEntry MigrateEntryOf(WorkerAnswer<MigrateResult> a) {
  return {a.ok, std::move(a.value), a.error_kind, std::move(a.error), std::move(a.error_detail)};
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
  size_t done = 0;
  WorkerPool pool;
  pool.count = archives.size();
  pool.jobs = jobs;
  pool.work = [&](size_t index, int fd) { AnswerInWorker<MigrateResult>(fd, [&] { return Migrate(archives[index]); }); };
  pool.started = batch.started;
  pool.finished = [&](size_t index, std::string& sent, int status) {
    MigrateEntry& e = entries[index] =
        MigrateEntryOf(TakeWorkerAnswer<MigrateResult>(sent, status, "migrating it", "a result"));
    if (e.migrated) e.result.path = archives[index].path;
    if (batch.finished) batch.finished(index, e, ++done, archives.size());
    return StopsAll(e);
  };
  RunInWorkers(pool);
}

}  // namespace

std::vector<MigrateEntry> MigrateBatch(const std::vector<MigrateOptions>& archives, const MigrateBatchOptions& batch) {
  std::vector<MigrateEntry> entries(archives.size());
  // No more conversions at once than half the available memory holds at
  // kMinChildMemory each.
  const size_t jobs = JobsWithinMemory(std::min<size_t>(static_cast<size_t>(std::max(batch.jobs, 1)), archives.size()));
  if (jobs <= 1) {
    for (size_t i = 0; i < archives.size(); ++i) {
      if (batch.started) batch.started(i);
      entries[i] = MigrateEntryOf(AnswerOf<MigrateResult>([&] { return Migrate(archives[i]); }));
      if (batch.finished) batch.finished(i, entries[i], i + 1, archives.size());
      if (StopsAll(entries[i])) break;
    }
    return entries;
  }
  MigrateInWorkers(archives, jobs, batch, entries);
  return entries;
}

}  // namespace tsctl
