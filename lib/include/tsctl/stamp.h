// `tsctl stamp`: adds, replaces and removes extra/ records of an existing
// archive. Every other record keeps its bytes and its offset, so tensor data
// stays 64-byte aligned and the cost does not grow with the archive's size.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/inspect.h"
#include "tsctl/json_value.h"
#include "tsctl/output.h"

namespace tsctl {

inline constexpr int kStampSchemaVersion = 1;
// How long an in-place stamp waits for another one (--wait): 10 s.
inline constexpr double kDefaultStampWaitSeconds = 10;
// The largest --meta document stamp reads: 16 MiB.
inline constexpr uint64_t kMaxMetaBytes = uint64_t{16} << 20;

struct StampOptions {
  // Content of a --meta JSON file (must be a JSON object), merged into the
  // producer record.
  std::string meta_json;
  bool has_meta = false;
  std::string meta_name = "producer_info.json";  // record under extra/
  // --set key=value: dotted keys nest; the value is JSON when it parses as
  // JSON (numbers, true, null, "quoted", {...}), else a string.
  std::vector<std::pair<std::string, std::string>> set;
  // --file NAME=PATH, already read: stored as extra/NAME.
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> remove;  // --remove NAME
  bool auto_fields = true;          // fill tsctl/libtorch versions, user, host, time, git, CI
  bool replace = false;             // start the producer record empty instead of merging
  bool dry_run = false;
  // --repair: only undo what an interrupted in-place stamp left (nothing
  // else is changed; the other options are ignored).
  bool repair = false;
  std::string output;  // write a new archive here instead of changing the original
  // In place, how long to wait for another stamp of the same file to finish
  // (an exclusive lock held for the whole write) before refusing.
  double wait_seconds = kDefaultStampWaitSeconds;
  // Advice appended when the archive cannot be written in place (read-only
  // file or file system): what the caller's user can do instead.
  std::string read_only_hint = "use --output to write a new one";
};

struct StampAction {
  std::string record;  // "extra/NAME"
  std::string action;  // add, replace, remove
  uint64_t old_size = 0;
  uint64_t new_size = 0;
};

struct StampResult {
  std::string path;
  std::string output;  // same as path when in place
  bool dry_run = false;
  // An interrupted in-place stamp was undone first (with dry_run or
  // --output: was found, and would be undone by an in-place stamp).
  bool repaired = false;
  std::vector<StampAction> actions;
  JsonValue producer;  // the producer record written (null if untouched)
  uint64_t bytes_written = 0;
};

// Validates a name for a record under extra/. Throws tsctl::Error (kUsage)
// if it is empty, absolute, or escapes extra/ ("..", backslashes, control
// characters).
void CheckExtraName(const std::string& name);

// Applies the options to the archive at `path`, in place or to
// options.output. In place, after a kill or a power loss at any moment, the
// file reads as the original or as the stamped archive in every ZIP reader
// (Python's zipfile, libzip, Info-ZIP, miniz/LibTorch); an interrupted stamp
// is undone, byte for byte, by the next stamp or by `repair` (see the
// invariant in lib/src/commands/stamp_write.cc). Every check runs before the
// first write, and dry_run runs them all (writability included) and writes
// nothing. Throws tsctl::Error: kIo (missing, read-only, disk full), kFormat
// (not a TorchScript archive, damaged ZIP structure, a producer record that
// is not a JSON object), kUsage (bad names, keys or JSON). On any error the
// archive is unchanged.
StampResult Stamp(const std::string& path, const StampOptions& options);

// Describes the journal of an in-place stamp that `archive` carries before
// its central directory, in one line: a proven interrupted stamp (the next
// stamp undoes it), or a journal-like tail that nothing proves (stamp leaves
// it alone: see FindInterrupted in lib/src/commands/stamp_internal.h).
// nullopt if there is none. For inspect and validate.
std::optional<std::string> DescribeStampJournal(const Archive& archive);

// Renderers (lib/src/render/render_stamp.cc); JSON output is made valid
// UTF-8, extra/ names and contents are escaped in text (see escape.h).
std::string RenderJson(const StampResult& result);
// `repair_only`: the result of --repair, told in one line.
void RenderText(const StampResult& result, std::ostream& out, bool repair_only = false);

// `stamp --show`: the archive's extra/ records (from Inspect), as JSON
// ({schema_version, path, extra} with inspect's extra entries) or as text.
std::string RenderStampShowJson(const ArchiveInfo& info);
void RenderStampShowText(const ArchiveInfo& info, std::ostream& out);
// stamp's documents in `format` (text, json): a stamp's result, and --show's.
std::string Render(const StampResult& result, OutputFormat format, bool repair_only = false);
std::string RenderStampShow(const ArchiveInfo& info, OutputFormat format);

}  // namespace tsctl
