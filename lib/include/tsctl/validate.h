// `tsctl validate`: a CI gate. Runs a list of checks on an archive and
// reports each as data; nothing here throws for a failed check.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <utility>
#include <ostream>
#include <string>
#include <vector>

#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/json_value.h"
#include "tsctl/output.h"
#include "tsctl/run_spec.h"
#include "tsctl/source.h"

namespace tsctl {

// 2: an archive has a "result" (PASSED, FAILED or NOT RUN) and, when NOT
// RUN, "not_run" (why); the report has "result" and "allow_not_run"
// (docs/manual/changes.md).
inline constexpr int kValidateSchemaVersion = 2;

enum class CheckStatus { kPass, kWarn, kFail, kSkip };
const char* CheckStatusName(CheckStatus status);  // PASS WARN FAIL SKIP

struct CheckResult {
  CheckResult() = default;
  CheckResult(std::string id_, CheckStatus status_, std::string message_)
      : id(std::move(id_)), status(status_), message(std::move(message_)) {}

  std::string id;  // e.g. "zip.crc"; every id is documented in tsctl-validate(1)
  // Which of its row's results this is, where a row yields several (pte.case:
  // "forward#0", a bundled test case); "" for the others. JUnit's testcase
  // is named id[item].
  std::string item;
  CheckStatus status = CheckStatus::kPass;
  std::string message;
  // Wall time of this check, measured: from the previous check's result (or
  // its step's start) to its own; a step's time after its last result counts
  // on that one. JUnit's testcase time: an archive's testcases add up to
  // about its time. The LibTorch child's checks come back together: its
  // load and run count on the first of them.
  double seconds = 0;
  // When this result was made (a monotonic clock, Now()): what `seconds` is measured from.
  double made_at = Now();
  static double Now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  // The model's method ran on inputs that mean something, and this check
  // judged what it did (torch.run of a run on given, stored or cleanly
  // inferred inputs; a run that failed). What NOT RUN is decided from.
  bool model_ran = false;
};

// An archive's verdict: FAILED (a FAIL, or a WARN with --strict) before
// NOT RUN (the model was to be loaded and run, and was not) before PASSED.
enum class ArchiveResult { kPassed, kFailed, kNotRun };
const char* ArchiveResultName(ArchiveResult result);  // PASSED FAILED "NOT RUN"

// What one file's checks share (lib/src/commands/check_context.h): the
// file, validate's options, its report, and facts several rows read.
struct CheckContext;

// validate's checks as one table (lib/src/formats/check_table.cc): the ZIP
// container's rows, each format's own (its row of tsctl/format.h), then
// what loading and running the model says; in report order. A row is a
// check: its id, whether its FAIL keeps LibTorch from loading the archive,
// its stage, and its function. CheckIds(), --skip's ids and the docs' list
// (tests/unit/validate_test.cc) follow.
struct CheckRow {
  const char* id;
  // A FAIL: the runtime (LibTorch, ExecuTorch's) is not given the file;
  // such a row runs even when --skip names it (and is reported SKIP).
  bool blocks_loading = false;
  // The model's own load and run, in whichever runtime: --skip of a kLoad
  // row loads nothing (as --no-load does), of a kRun row runs nothing (as
  // --no-run); a kLoad, kMethod or kRun result that is not a PASS says why
  // a model was NOT RUN.
  enum class Stage { kNone, kLoad, kMethod, kRun } stage = Stage::kNone;
  // The check: appends its results (none where it does not apply, several
  // where it judges several things, e.g. one per method) in table order,
  // and only when it is not skipped. Null for a runtime's rows: one run of
  // the model (Format::run) yields them, in the order the run made them.
  void (*check)(CheckContext& context) = nullptr;
  // It judges the file against the user's lists (--allow-ops,
  // --require-meta), not whether the file is sound: its FAIL keeps no
  // command from loading the file (check_before_load.h's RefusesLoad).
  bool judges_request = false;
};
const std::vector<CheckRow>& CheckTable();
// The row of `id`; null if none.
const CheckRow* CheckRowOf(std::string_view id);

// Every check id validate reports, in report order; tsctl-validate(1)
// documents each.
const std::vector<std::string>& CheckIds();
// Throws tsctl::Error (kUsage), one line listing CheckIds(), unless `id` is one.
void RequireCheckId(const std::string& id, const std::string& flag);

struct ArchiveReport {
  std::string path;
  std::vector<CheckResult> checks;
  std::string schema;             // the method's schema when it loaded
  std::vector<std::string> ops;   // operators the methods call (LibTorch's list, or the static one without loading)
  JsonValue details;              // load time, outputs, error statistics (an object)
  double seconds = 0;             // wall time to check this archive
  // Why the model was not run although it was to be (NOT RUN): "" when it
  // ran, or when --no-load, --no-run or --skip torch.load/torch.run asked
  // for no run. Set by ValidateSource from the checks (CheckResult::model_ran).
  std::string not_run;
  std::string not_run_check;  // the check whose message not_run is ("torch.run"), "" for none

  int Count(CheckStatus status) const;
  ArchiveResult Result(bool strict) const;
};

// validate's flags: the run (RunSpec: method, inputs, device, limits; its
// method "all" checks every method) and what validate checks and writes.
struct ValidateOptions : RunSpec {
  // --timeout: 0 (the default) is ValidateTimeout's, per archive.
  ValidateOptions() { timeout_seconds = 0; }
  std::string reference_path;
  // --reference-model B: run B (in its own child) on the same inputs and
  // compare this archive's outputs with B's, as with --reference.
  std::string reference_model_path;
  // --compare-intermediates (with reference_model_path): record every tensor
  // both methods' graphs compute and report the first that differs
  // (torch.intermediates).
  bool compare_intermediates = false;
  std::vector<double> rtol = {1e-5};
  std::vector<double> atol = {1e-8};
  bool record_reference = false;   // store inputs and outputs in extra/tsctl_reference.pt
  std::string save_reference_path; // write inputs and outputs to this file (torch.load reads it)
  // ExecuTorch files (.pte): --kernels FILE (a runtime's registered
  // operators, one name.overload a line, or a selected_operators.yaml),
  // --data FILE.ptd (external tensors), --allow-delegates (backend ids).
  std::string pte_kernels_path;
  std::string pte_data_path;
  bool has_allow_delegates = false;
  std::vector<std::string> allow_delegates;
  bool has_allow_ops = false;
  std::vector<std::string> allow_ops;
  std::vector<std::string> require_meta;  // keys of extra/producer_info.json (dotted)
  bool load = true;   // false: only the checks that need no LibTorch
  bool run = true;
  std::string save_outputs_path;  // write the outputs here (torch.load reads it; .npy/.npz: NumPy's format)
  std::string save_inputs_path;   // write the inputs the run used here (the same formats)
  bool method_given = false;      // --method was given ("all" checks every method)
  bool seed_given = false;        // --seed was given: it also picks the number of calls (torch.stateful)
  // --calls N: calls on one copy of the model (torch.stateful); 0: 3 to 5,
  // drawn from --seed when given, else at random.
  int calls = 0;
  bool allow_load_hooks = false;  // ts.hooks findings WARN and the archive is loaded anyway
  uint64_t max_record_bytes = uint64_t{4} << 30;  // larger records fail zip.bomb
  int torch_threads = 0;  // LibTorch's intra-op threads in each child (0: its default)
  // --skip: check ids (CheckIds()) reported as SKIP, "skipped by --skip",
  // whatever they would have found; each appears once even where it would
  // not have run. torch.load skipped: LibTorch is not started (as --no-load);
  // torch.run skipped: the method is not run (as --no-run).
  std::vector<std::string> skip;
  // Called in the process that checks the archive (ValidateBatch with one
  // archive at a time) with what its LibTorch child is doing: "loading",
  // "running forward", "trying inferred inputs: candidate 3".
  std::function<void(const std::string& doing)> progress;
};

// validate's --timeout when none is given, for an archive of `bytes`: what
// LibTorch took over ../shared/corpus (slowest child 3.0 s, load and every
// candidate's runs; median 0.09 s) with a wide margin, plus what loading
// and running grows with: a scripted 1 GiB model's child took 12-39 s on a
// loaded 2-core machine (loading 1.2-2.7 s; the rest its runs on fresh
// copies). 60 s + 60 s per GiB (docs/manual/validate.md, "Time limits").
double ValidateTimeout(uint64_t bytes);

// Throws tsctl::Error (kIo) only if the file cannot be opened.
ArchiveReport ValidateArchive(const std::string& path, const ValidateOptions& options);
// The same over bytes from any source; with options.load, LibTorch reads
// the file at `path` (so it must be the same bytes).
ArchiveReport ValidateSource(std::unique_ptr<ByteSource> src, const std::string& path, const ValidateOptions& options);

// Several archives (tsctl validate A B C ...).
struct ValidateBatchOptions {
  // Archives checked at once, each in a worker process forked from this one
  // (1: one after another, in this process; also whenever --save-outputs or
  // --save-reference name one file for all). Each worker's LibTorch children
  // then get cores / jobs intra-op threads.
  int jobs = 1;
  // Called after each archive is done (done of total), in this process.
  std::function<void(size_t done, size_t total)> progress;
  // The archive being checked that started first, and for how long it has
  // been (seconds): when it starts (one after another), and about once a
  // second while workers run; "" when none is.
  std::function<void(const std::string& path, double seconds)> waiting;
};

// One archive's outcome: its report, or the tsctl::Error that kept it from
// being checked at all (a missing file, an --arg that does not fit).
struct BatchEntry {
  std::string path;
  bool checked = false;
  ArchiveReport report;
  ErrorKind error_kind = ErrorKind::kIo;
  std::string error, error_detail;
};

// ValidateArchive() for each path, `jobs` at a time; entries in the order of
// `paths`, the same whatever `jobs` is. Throws tsctl::Interrupted (after
// stopping every worker) if this process gets SIGINT, SIGTERM or SIGHUP.
std::vector<BatchEntry> ValidateBatch(const std::vector<std::string>& paths, ValidateOptions options,
                                      const ValidateBatchOptions& batch);

// The number of cores this process may use: validate's default --jobs.
int DefaultValidateJobs();

// --shard K/N: parses "K/N" (1 <= K <= N; tsctl::Error kUsage otherwise),
// and picks the K-th of N slices of a list: every N-th item from the K-th,
// in the order given (stable for the same list; the N slices cover it once).
std::pair<int, int> ParseShard(const std::string& text);
std::vector<std::string> ShardOf(const std::vector<std::string>& items, int k, int n);

struct ValidationReport {
  std::vector<ArchiveReport> archives;
  // Archives given that could not be checked at all (a missing file, a
  // usage error such as an --arg that does not fit; each said so on stderr).
  std::vector<std::string> not_checked;
  bool strict = false;
  bool allow_not_run = false;  // --allow-not-run: NOT RUN archives do not fail the run
  // The run's verdict: FAILED if any archive is FAILED or could not be
  // checked, else NOT RUN if any archive is, else PASSED.
  ArchiveResult Result() const;
  // PASSED, or NOT RUN with allow_not_run: what exits 0.
  bool Passed() const;
};

// JSON text, one line without a newline.
std::string RenderJson(const ValidationReport& report);
void RenderText(const ValidationReport& report, std::ostream& out);
std::string RenderJUnit(const ValidationReport& report);
// validate's document in `format` (text, json, junit).
std::string Render(const ValidationReport& report, OutputFormat format);
// --list-ops: one operator per line, as PyTorch's dump_operator_names; with
// `name_each` (several archives given) a comment line names each archive (the
// list stays a valid --allow-ops file).
std::string RenderOperatorList(const ValidationReport& report, bool name_each);
// validate --report: one self-contained offline HTML page for the whole run
// (the frame of tsctl report's pages, tsctl/report.h): a summary (the
// verdict, the checks by verdict, a row per archive), then per archive its
// checks, the inputs used and where they came from, the outputs, and the
// comparison with the reference and its error figures. Every string from an
// archive or from LibTorch is HTML-escaped.
std::string RenderHtml(const ValidationReport& report);

// Reads an operator list: one name per line, '#' comments; "aten::add"
// allows every overload of it. Throws tsctl::Error (kIo).
std::vector<std::string> ReadOperatorList(const std::string& path);
// True if `op` ("aten::add.Tensor") is in `allowed`. When `overload_known`
// is false (a static list read from code: "aten::add"), an allowed entry of
// any overload of it ("aten::add.Tensor") counts too.
bool OperatorAllowed(const std::string& op, const std::vector<std::string>& allowed, bool overload_known = true);

}  // namespace tsctl
