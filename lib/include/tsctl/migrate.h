// tsctl migrate: a TorchScript archive carried to a torch.export program
// (.pt2), converted by the converter the embedded Python's torch ships and
// verified against the archive before anything is written.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tsctl/error.h"
#include "tsctl/output.h"
#include "tsctl/run_spec.h"

namespace tsctl {

struct MigrateOptions : RunSpec {
  std::string path;    // the TorchScript archive
  std::string output;  // the .pt2 written (atomically) when verified
  bool aoti = false;   // an AOTInductor package instead of a torch.export program
  bool keep_unverified = false;  // write it anyway, marked unverified in its provenance record
  // --allow-load-hooks: Migrate checks the archive first, as validate does;
  // this lets an archive through whose only finding is ts.hooks.
  bool allow_load_hooks = false;
  double rtol = 1e-5;
  double atol = 1e-6;
  // --bench: after verification, time the archive, the program and (with
  // aoti) the AOTInductor package on the sample inputs, in turns:
  // kMigrateBenchWarmup warm-up calls, then bench_iters timed calls each.
  bool bench = false;
  int bench_iters = 20;
  // LibTorch's intra-op threads in the child (0: LibTorch's default); set
  // by MigrateBatch when archives are converted side by side.
  int torch_threads = 0;
  // --compare-intermediates: an input set whose outputs differ names the
  // first node whose value differs (MigrateCheck::divergence).
  bool compare_intermediates = false;
};

// Untimed calls of each form before --bench's timed ones.
inline constexpr int kMigrateBenchWarmup = 3;

// How far a model got, in order. kPackaged: verified and written.
enum class MigrateStage { kNone, kLoaded, kInputs, kConverted, kVerifiedSample, kVerifiedShapes, kPackaged };
// "loaded", "inputs found", "converted", "verified on the sample",
// "verified on other shapes", "packaged"; "not loaded" for kNone.
const char* MigrateStageName(MigrateStage stage);
// "loaded", "inputs", ... as JSON writes them (snake case).
const char* MigrateStageKey(MigrateStage stage);

// One output's largest differences between the archive and the program.
struct MigrateOutputError {
  std::string name;  // "output 0", in the order the outputs flatten
  double max_abs = 0;
  double max_rel = 0;
};

// --compare-intermediates, for an input set whose outputs differ: the two
// graphs' intermediate tensors matched where they can be (the same operator
// on the same shapes and dtype, in the same order) and compared in the
// archive's order.
struct MigrateDivergence {
  bool compared = false;     // the intermediates were computed and matched
  std::string node;          // the first matched node that differs: "aten::rand"
  std::string where;         // its source line, from the archive's debug info
  std::string program_node;  // its counterpart in the program: "rand (aten::rand)"
  double max_abs = -1;       // between the two values there
  int matched = 0;           // nodes matched between the graphs
  int agreed = 0;            // matched nodes that agreed before it
  std::string note;          // why no node is named, where none is
};

// One input set both ran on.
struct MigrateCheck {
  std::string inputs;   // "sample (1x3x8x8)", "x.shape[2]=9 (1x3x9x8)"
  bool matched = false;
  std::string skipped;  // the archive itself fails on it: nothing to verify
  double max_abs = -1;  // over every output; -1 where they could not be compared
  double max_rel = -1;
  std::string error;    // the first output that differs, or the program's failure
  // Per output, those compared (none where the counts differ; up to the
  // first whose dtype or shape differs).
  std::vector<MigrateOutputError> outputs;
  MigrateDivergence divergence;  // with --compare-intermediates, where the outputs differ
};

// How long one step of a migration took.
struct MigrateTiming {
  std::string step;  // "inputs", "load", "conversion", "verification on the sample", ...
  double seconds = 0;
};

// What stopped a model: a node the converter cannot convert (kind
// "prim::Loop", the node as TorchScript prints it, the source line the
// archive's debug info gives), or a stage's failure ("wrong result",
// "refused shape", "load", "packaging").
struct MigrateBlocker {
  std::string kind;
  std::string node;
  std::string where;
  std::string advice;  // what to do about it, where tsctl knows
};

// One form of the model timed by --bench: "torchscript" (the archive),
// "program" (the torch.export program) or "aoti" (the AOTInductor package).
struct MigrateBenchForm {
  std::string form;
  std::vector<uint64_t> latencies_ns;  // the timed calls, in order
  double median_ns = 0;                // of latencies_ns (bench's ComputeStats)
  double ratio = 0;                    // median_ns / the archive's median_ns; 0 where either is unknown
  std::string error;                   // why it could not be timed; latencies_ns empty
};

struct MigrateResult {
  std::string path;
  std::string output;  // where it was written; empty when nothing was
  MigrateStage stage = MigrateStage::kNone;
  bool verified = false;
  bool written = false;
  std::string error;  // one line, when it stopped short of kPackaged
  std::vector<MigrateBlocker> blockers;
  std::vector<MigrateCheck> checks;
  std::vector<std::string> dynamic;  // "x.shape[0] in [2, inf]"
  std::string input_source;          // where the sample inputs came from
  std::vector<std::string> inputs;   // their specs, where they were specs
  std::string converter;             // "torch._export.converter.TS2EPConverter"
  std::string torch_version;
  std::string sha256;                // of the source archive
  std::vector<std::string> warnings;
  std::vector<MigrateTiming> timings;  // the steps run, in order
  double seconds = 0;                  // the whole migration
  // --bench, for a verified model: the archive first, then the program,
  // then the AOTInductor package; empty without --bench or when not verified.
  std::vector<MigrateBenchForm> bench;
  int bench_warmup = 0;  // untimed calls of each form before the timed ones
};

// Converts, verifies and writes one archive (the LibTorch child finds
// inputs where none are given, the embedded Python converts). Failures of
// the model are data in the result; throws tsctl::Error for the caller's
// errors: kUsage (options, no inputs found), kIo, kFormat (not a TorchScript
// archive), kUnavailable (no Python support, or a torch without the converter).
MigrateResult Migrate(const MigrateOptions& options);

// One archive's outcome: its result, or the tsctl::Error Migrate threw.
struct MigrateEntry {
  bool migrated = false;
  MigrateResult result;  // when migrated
  ErrorKind error_kind = ErrorKind::kIo;
  std::string error, error_detail;
};

// Many archives (tsctl migrate A B C --jobs N).
struct MigrateBatchOptions {
  // Archives converted at once, each in a worker process forked from this
  // one (1: one after another, in this process). Each worker's children then
  // get cores / jobs intra-op threads.
  int jobs = 1;
  // Called in this process when an archive starts (its index), and when
  // one is done (in the order they finish: with jobs > 1 not the order given).
  std::function<void(size_t index)> started;
  std::function<void(size_t index, const MigrateEntry& entry, size_t done, size_t total)> finished;
};

// Migrate() for each of `archives`, `jobs` at a time; entries in the order
// given, the same whatever `jobs` is. An archive refused with kUnavailable
// (no converter) starts no further archive: the entries of those not
// started stay empty (migrated false, error ""). Throws tsctl::Interrupted
// (after stopping every worker) on SIGINT, SIGTERM or SIGHUP.
std::vector<MigrateEntry> MigrateBatch(const std::vector<MigrateOptions>& archives, const MigrateBatchOptions& batch);

// The provenance record a migrated .pt2 carries (extra/tsctl_migrate.json).
inline constexpr const char* kMigrateRecord = "tsctl_migrate.json";

// The result of an archive tsctl refused before conversion (many archives
// go on past it): its error as the result's, and a blocker named by what
// failed ("not a TorchScript archive", "load", "no tensor inputs", ...).
MigrateResult MigrateRefused(const std::string& path, const Error& error);

// Text: one paragraph per model, then (for more than one) how many reached
// each stage and the blockers ranked by how many models they stop.
std::string RenderMigrateText(const std::vector<MigrateResult>& results);
// JSON (docs/schemas/migrate.schema.json).
std::string RenderMigrateJson(const std::vector<MigrateResult>& results);
// JUnit XML for CI: one testcase per archive, failed unless verified and
// written (the message names the stage it stopped at and its first blocker;
// the text paragraph is the failure's body or the case's system-out).
std::string RenderMigrateJUnit(const std::vector<MigrateResult>& results);
// migrate's document in `format` (text, json, junit).
std::string Render(const std::vector<MigrateResult>& results, OutputFormat format);
// migrate --report: one self-contained offline HTML page for the run (the
// frame of tsctl report's pages): a summary (how many models reached each
// stage, as a table and an SVG bar chart; the blockers ranked by models
// stopped; a row per model), then per model (sections a1, a2, ...) its
// stage, timings, blockers with their advice, each check's per-output
// errors (skipped ones with why), and the file written with its provenance.
// Every string from an archive or from torch is HTML-escaped.
std::string RenderMigrateHtml(const std::vector<MigrateResult>& results);

}  // namespace tsctl
