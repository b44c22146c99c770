// The flags of a DiffOptions (tsctl/diff.h), bound once for tsctl diff and
// tsctl report A B, which compare the same way, and how both open A and B.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "tsctl/format.h"
#include "tsctl/diff.h"

namespace tsctl::cli {

struct DiffFlags {
  std::string ignore, only;  // comma-separated section names
  DiffOptions options;       // tolerances, --exact, --ignore-mangle, -U
};

// Adds --ignore, --only, --rtol, --atol, --exact, --ignore-mangle and
// -U/--context to `sub`, bound to `flags`; returns them, so that a command
// can tell whether one was given.
std::vector<CLI::Option*> AddDiffFlags(CLI::App* sub, DiffFlags& flags);

// The options with --only and --ignore applied. Throws tsctl::Error
// (kUsage) naming the flag for an unknown section or an empty list.
DiffOptions ResolveDiffFlags(const DiffFlags& flags);

// Opens `path` as one side of a diff into `out` (tsctl/format.h's Open: a
// TorchScript archive or a .pt2, its ZIP structure sound or not: diff shows
// what differs in it; a pair a format reads whole, PairReader, goes to that
// format before this). An error
// is one line about `path` for `command`; returns its exit code, or 0.
int OpenDiffSide(const std::string& command, const std::string& path, const GlobalOptions& global,
                 std::optional<OpenedFile>& out);

}  // namespace tsctl::cli
