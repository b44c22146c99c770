// Shared plumbing of the tsctl executable: how subcommands register, and how
// errors become one stderr line and an exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "tsctl/error.h"

namespace tsctl::cli {

struct GlobalOptions {
  bool verbose = false;
};

// What each cmd_*.cc provides: adds its subcommand to `app` and sets `run` to
// the function main calls when that subcommand was given.
struct Command {
  CLI::App* sub = nullptr;
  std::function<int()> run;
};

Command AddInspect(CLI::App& app, const GlobalOptions& global);
Command AddGraph(CLI::App& app, const GlobalOptions& global);
Command AddCode(CLI::App& app, const GlobalOptions& global);
Command AddStamp(CLI::App& app, const GlobalOptions& global);
Command AddValidate(CLI::App& app, const GlobalOptions& global);
Command AddBench(CLI::App& app, const GlobalOptions& global);
Command AddTrace(CLI::App& app, const GlobalOptions& global);
Command AddScript(CLI::App& app, const GlobalOptions& global);

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

// Runs `fn`; a tsctl::Error (or any other exception) it throws becomes one
// stderr line about `subject` and its exit code.
int Guarded(const std::string& command, const std::string& subject, const GlobalOptions& global,
            const std::function<int()>& fn);

// Runs `fn` for each archive, going on after a failure; returns the exit code
// of the first failure, or 0.
int ForEachArchive(const std::string& command, const std::vector<std::string>& archives, const GlobalOptions& global,
                   const std::function<void(const std::string& path)>& fn);

// Adds the repeatable --load-library PATH flag to `sub`.
CLI::Option* AddLoadLibraryFlag(CLI::App* sub, std::vector<std::string>& libraries);
// The operator libraries to load: TSCTL_LOAD_LIBRARIES's, then `flags`.
std::vector<std::string> OperatorLibraries(const std::vector<std::string>& flags);

// Writes `text` to `path` atomically, or to stdout when `path` is empty or "-".
void WriteOutput(const std::string& path, const std::string& text);

}  // namespace tsctl::cli
