// The static checks of `tsctl validate`, before any command hands an archive
// to LibTorch: what validate fails without loading it is loaded nowhere else
// either (graph, code --compiled, report's graph, bench, trace, migrate,
// validate --reference-model). No LibTorch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/validate.h"

namespace tsctl {

// Why an archive is not given to LibTorch: the checks it fails, and one
// line that names them with what they found.
struct LoadRefusal {
  std::vector<CheckResult> failed;  // validate's FAIL results, in its order
  std::string message;              // "LibTorch is not given an archive that fails ts.hooks: ..."
};

// Whether a result keeps an archive from LibTorch: a FAIL of one of the
// static rows every command runs before a load (the ZIP container's, a ZIP
// format's: zip.*, ts.*, pt2.*), but for those that judge the user's lists
// (CheckRow::judges_request: code.ops, pt2.ops, meta.producer).
bool RefusesLoad(const CheckResult& check);

// Runs validate's own static checks on `archive` (named `path` in what they
// say): validate's rows, zip.* then its format's (ZipModel::checks: ts.*
// for TorchScript, pt2.* for a .pt2), run as validate runs them. Any FAIL refuses it. `allow_load_hooks`
// (--allow-load-hooks) makes ts.hooks a WARN that lets it through; nothing
// else can be let through. Nothing when the archive may be loaded.
std::optional<LoadRefusal> CheckBeforeLoad(const Archive& archive, const std::string& path, bool allow_load_hooks);

// Throws tsctl::Error (kRefused: exit 1, one line naming the checks) when
// CheckBeforeLoad refuses the archive.
void RequireLoadable(const Archive& archive, const std::string& path, bool allow_load_hooks);

// What every command does before it hands `archive` (read from `path`, its
// ZIP structure found sound: RequireSoundStructure) to LibTorch: the
// LibTorch server started (ts.version reads its range), validate's static
// checks passed (RequireLoadable: kRefused); returns CheckedLoadPath.
std::string CheckForLibTorch(const Archive& archive, const std::string& path, bool allow_load_hooks);

// What LibTorch opens so that it loads the file tsctl checked, not whatever
// the path names by the time the child starts: "/proc/self/fd/N" for the
// archive's open descriptor (the child is given it), "" for an archive not
// read from a file. The archive must stay open until the child has run.
std::string CheckedLoadPath(const Archive& archive);

}  // namespace tsctl
