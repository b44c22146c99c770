// tsctl validate over several archives: --shard K/N picks a slice of them,
// --jobs N checks N at once, each in a worker process forked from this one
// (which started the LibTorch server once: every worker attaches to it, so
// their LibTorch children start warm; torch_server.h). A worker runs
// ValidateArchive() as the one-by-one path does and sends the report back
// whole (the LibTorch door's CBOR codec: names that are not UTF-8 and
// non-finite numbers kept), so reports come out in input order and the same
// as with --jobs 1.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>

#include "process.h"
#include "torch_child.h"
#include "torch_child_codec.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/pt2.h"
#include "tsctl/pte.h"
#include "tsctl/source.h"
#include "tsctl/validate.h"
#include "../commands/bench_pte.h"
#include "../commands/validate_internal.h"
#include "../commands/worker_pool.h"

namespace tsctl {
namespace {

BatchEntry BatchEntryOf(const std::string& path, WorkerAnswer<ArchiveReport> a) {
  return {path, a.ok, std::move(a.value), a.error_kind, std::move(a.error), std::move(a.error_detail)};
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
    // An ExecuTorch program: the reference of an ExecuTorch program (its
    // runtime runs it, validate_pte_reference.cc).
    if (const std::string id = PteIdentifier(path); id == "ET") {
      ReadPte(path);
      return;
    } else if (id == "FT" || id == "BP") {
      throw Error(ErrorKind::kUsage, "--reference-model takes a program (.pte) or a TorchScript archive, not a .ptd or .bpte");
    }
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
  // Children side by side share the cores: LibTorch's threads split them;
  // and the memory: the run as a whole stays within half of what is
  // available (each child's default cap is its share).
  options.torch_threads = std::max(1, DefaultValidateJobs() / static_cast<int>(jobs));
  if (options.memory_limit_bytes == 0) options.memory_limit_bytes = DefaultChildMemoryLimit(jobs);
  if (options.load) {
    try {
      WarmUpTorch();  // before the first fork: every worker attaches to this server
    } catch (const Error&) {
    }
  }
  size_t done = 0;
  WorkerPool pool;
  pool.count = paths.size();
  pool.jobs = jobs;
  pool.work = [&](size_t index, int fd) {
    AnswerInWorker<ArchiveReport>(fd, [&] { return ValidateArchive(paths[index], options); });
  };
  pool.finished = [&](size_t index, std::string& sent, int status) {
    entries[index] = BatchEntryOf(paths[index], TakeWorkerAnswer<ArchiveReport>(sent, status, "checking it", "a report"));
    if (batch.progress) batch.progress(++done, paths.size());
    return false;
  };
  if (batch.waiting) pool.waiting = [&](size_t index, double seconds) { batch.waiting(paths[index], seconds); };
  RunInWorkers(pool);
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
  if (!options.save_outputs_path.empty() || !options.save_inputs_path.empty() || !options.save_reference_path.empty()) jobs = 1;
  // No more children at once than half the available memory holds at
  // kMinChildMemory each (with --memory-limit, the caller's budget).
  if (options.memory_limit_bytes == 0) jobs = JobsWithinMemory(jobs);
  if (jobs <= 1) {
    for (size_t i = 0; i < paths.size(); ++i) {
      if (batch.waiting) batch.waiting(paths[i], 0);
      entries[i] = BatchEntryOf(paths[i], AnswerOf<ArchiveReport>([&] { return ValidateArchive(paths[i], options); }));
      if (batch.progress) batch.progress(i + 1, paths.size());
    }
    return entries;
  }
  ValidateInWorkers(paths, options, jobs, batch, entries);
  return entries;
}

}  // namespace tsctl
