// Shared plumbing of the tsctl executable: how subcommands register, and how
// errors become one stderr line and an exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "tsctl/error.h"
#include "tsctl/output.h"
#include "tsctl/source.h"

namespace tsctl::cli {

struct GlobalOptions {
  bool verbose = false;
  // --max-input-size: the most bytes read from a stream or taken as a whole
  // input file (stamp --file, --meta).
  uint64_t max_input_bytes = kDefaultMaxInputBytes;
};

// What a command needs before it can run, declared once in the command table
// (main.cc) in the manner of ninja's tool table: shown in `tsctl --help`.
enum Needs : unsigned {
  kNeedsArchive = 1,   // reads one or more archives
  kNeedsLibTorch = 2,  // loads archives into LibTorch (the plugin) for some or all of its work
  kNeedsPython = 4,    // may embed Python (--python)
  kNeedsLibTorchForCompiled = 8,  // loads LibTorch only for --compiled (code)
  kNeedsPythonAlways = 16,        // always embeds Python (export)
  kNeedsPythonConverter = 32,     // always embeds Python whose torch converts TorchScript (migrate)
  kNeedsLibTorchForGraph = 64,    // a LibTorch child for a TorchScript archive's graph (report)
  kNeedsLibTorchForDump = 128,    // a LibTorch child for --dump-runtime torch (compat)
};

// What a command's binder returns: the function main calls when that
// subcommand was given (flags are bound by then).
using RunFn = std::function<int()>;

// A binder adds the command's flags to `sub` (created by main from the table).
using Binder = RunFn (*)(CLI::App* sub, const GlobalOptions& global);

// One row of the command table.
struct Tool {
  const char* name;
  const char* help;
  unsigned needs;  // Needs bits
  Binder bind;
};

RunFn BindInspect(CLI::App* sub, const GlobalOptions& global);
RunFn BindGraph(CLI::App* sub, const GlobalOptions& global);
RunFn BindCode(CLI::App* sub, const GlobalOptions& global);
RunFn BindDiff(CLI::App* sub, const GlobalOptions& global);
RunFn BindStamp(CLI::App* sub, const GlobalOptions& global);
RunFn BindValidate(CLI::App* sub, const GlobalOptions& global);
RunFn BindBench(CLI::App* sub, const GlobalOptions& global);
RunFn BindTrace(CLI::App* sub, const GlobalOptions& global);
RunFn BindScript(CLI::App* sub, const GlobalOptions& global);
RunFn BindExport(CLI::App* sub, const GlobalOptions& global);
RunFn BindMigrate(CLI::App* sub, const GlobalOptions& global);
RunFn BindReport(CLI::App* sub, const GlobalOptions& global);
RunFn BindCompat(CLI::App* sub, const GlobalOptions& global);

// Adds `--format` with `choices` (the first is the default) and `--json`, an
// alias of `--format json`, parsed once into `format`.
void AddFormatOption(CLI::App* sub, OutputFormat& format, const std::vector<OutputFormat>& choices);

// The known name closest to `typo` by edit distance, or "" when none is close.
std::string ClosestName(const std::string& typo, const std::vector<std::string>& names);

// Prints "tsctl: <command>: <subject>: <message>" (and the detail with -v)
// to stderr and returns the exit code for the error's kind.
int Report(const std::string& command, const std::string& subject, const Error& error,
           const GlobalOptions& global);

// Same for an error that is not a tsctl::Error (treated as an I/O failure).
int ReportUnexpected(const std::string& command, const std::string& subject,
                     const std::exception& error);

// "1e-3,1e-4" -> {0.001, 0.0001}. Throws tsctl::Error (kUsage) naming `flag`
// if a part is not a number in [min, max] (described as `what`) or none is given.
std::vector<double> ParseNumberList(const std::string& text, const std::string& flag, double min, double max,
                                    const std::string& what);

// A CLI11 check that a flag's value is a finite number in [min, max]
// (`integer`: a whole number). The usage error names the allowed range:
// "--iters: 0 is out of range: must be an integer of at least 1".
// `range` describes it for that message ("an integer of at least 1").
// A size such as 512M, 8G, 8GiB or 1000000 (bytes; K, M, G, T are powers
// of 1024), for flag `flag`. Throws tsctl::Error (kUsage) naming the flag.
uint64_t ParseByteSize(const std::string& text, const std::string& flag);

CLI::Validator NumberIn(double min, double max, bool integer, const std::string& range);

// Runs `fn`; a tsctl::Error (or any other exception) it throws becomes one
// stderr line about `subject` and its exit code.
int Guarded(const std::string& command, const std::string& subject, const GlobalOptions& global,
            const std::function<int()>& fn);

// Runs `fn` for each archive, going on after a failure; returns the exit code
// of the first failure, or 0.
int ForEachArchive(const std::string& command, const std::vector<std::string>& archives, const GlobalOptions& global,
                   const std::function<void(const std::string& path)>& fn);

// Makes every repeatable option of `sub` that takes one value per flag
// (allow_extra_args(false): `--input A --input B`, not `--input A B`) expect
// exactly one value per occurrence and keep them all, so that --help shows
// `TEXT`, not `TEXT ...` (which promises several values after one flag).
void OneValuePerFlag(CLI::App* sub);

// Adds --allow-load-hooks to `sub`, a command that loads archives into
// LibTorch after validate's static checks: the one finding it lets through
// is ts.hooks. `help`: the command's own wording ("": the common one).
CLI::Option* AddAllowLoadHooksFlag(CLI::App* sub, bool& allow, const std::string& help = "");

// Adds the repeatable --load-library PATH flag to `sub`.
CLI::Option* AddLoadLibraryFlag(CLI::App* sub, std::vector<std::string>& libraries);
// The operator libraries to load: TSCTL_LOAD_LIBRARIES's, then `flags`.
std::vector<std::string> OperatorLibraries(const std::vector<std::string>& flags);

// Writes `text` to `path` atomically, or to stdout when `path` is empty or "-".
void WriteOutput(const std::string& path, const std::string& text);

}  // namespace tsctl::cli
