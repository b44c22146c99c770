// The file formats tsctl reads, one row each (ninja's table of tools, bloaty's
// chain of ObjectFile readers): a file is recognised once, by its content
// (a file's name only as the documented tiebreak), and every command asks
// the row of its format what to do; no command branches on the format.
//
// The rows live in lib/src/formats/, one folder per format (torchscript/,
// pt2/, executorch/); formats.cc lists them. A new format is a folder of its
// own, a line in that list, its files in lib/CMakeLists.txt and its docs
// (docs/manual/design.md, "Formats"; its checks in validate's).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/bench.h"
#include "tsctl/code.h"
#include "tsctl/compat.h"
#include "tsctl/diff.h"
#include "tsctl/output.h"
#include "tsctl/report.h"
#include "tsctl/source.h"
#include "tsctl/torch_backend.h"
#include "tsctl/validate.h"

namespace tsctl {

struct Format;
struct ZipModel;  // the ZIP formats' part, private (lib/src/commands/zip_model.h)

// A file opened as its format: the row, and what recognising it opened.
struct OpenedFile {
  const Format* format = nullptr;
  std::string path;
  uint64_t max_input_bytes = kDefaultMaxInputBytes;
  // The ZIP formats' archive (Archive::OpenModel: read, classified, its
  // structure not yet judged); empty for the others, which read `path`.
  std::optional<Archive> archive;
};

// inspect: what to read and how to print it.
struct InspectRequest {
  OutputFormat format = OutputFormat::kText;
  bool verify_crc = false;
  TextOptions text;
};

// report ARCHIVE: the page's graph (a TorchScript archive's needs LibTorch).
struct PageRequest {
  ReportOptions::TorchScriptGraph graph = ReportOptions::TorchScriptGraph::kAuto;
  bool allow_load_hooks = false;
};

// A pair of files that diff and report A B compare.
struct DiffRequest {
  std::string a, b;
  DiffOptions options;
  uint64_t max_input_bytes = kDefaultMaxInputBytes;
};

struct Format {
  const char* name;  // "torchscript", "pt2", "executorch"
  // Recognition, in formats.cc's order. `claims_head`: the file's first
  // `head_bytes` bytes say it is one (a format whose files are no ZIP);
  // `extensions`: its files' names, the tiebreak for a file too short or
  // odd to say (never for a ZIP: a renamed archive stays what it is).
  // `zip`: a ZIP format's row of what the commands that take an Archive do
  // with one (lib/src/commands/zip_model.h), whose claims recognise its
  // archives by their records.
  size_t head_bytes = 0;
  bool (*claims_head)(std::string_view first_bytes) = nullptr;
  std::vector<const char*> extensions;
  const ZipModel* zip = nullptr;

  // The commands. Each throws tsctl::Error (one line) where the format has
  // no such thing to give (a .pt2's stored TorchScript code).
  std::string (*inspect)(const OpenedFile& file, const InspectRequest& request) = nullptr;
  std::string (*graph)(const OpenedFile& file, const GraphOptions& options, OutputFormat format) = nullptr;
  std::string (*stored_code)(const OpenedFile& file, const CodeQuery& query) = nullptr;
  std::string (*report_page)(const OpenedFile& file, const PageRequest& request) = nullptr;
  // validate: the format's own checks (its rows of validate's table, in
  // report order, between the ZIP container's and the LibTorch run's, each
  // with its function; validate's driver runs them), then `run`: the
  // model's load and run in its runtime (one run yields the runtime's
  // rows), or with --no-load what the report lists instead (its operators);
  // nullptr for a format with no runtime (its rows are all it has).
  // The context's `archive` is the ZIP formats' (their zip.* rows ran
  // first), `src` the others' bytes.
  std::vector<CheckRow> checks;
  void (*run)(CheckContext& context) = nullptr;
  // diff and report A B: `reads_pairs` formats compare a pair where either
  // side is one of theirs, reading both sides as theirs (the other side gets
  // the reader's line); the ZIP formats compare two opened archives.
  bool reads_pairs = false;
  DiffResult (*diff_pair)(const DiffRequest& request) = nullptr;
  std::string (*report_pair)(const DiffRequest& request) = nullptr;
  // bench, where the format has a runner of its own (ExecuTorch's); nullptr:
  // LibTorch's (tsctl/torch_backend.h's Bench, TorchScript and .pt2).
  BenchResult (*bench)(const BenchOptions& options) = nullptr;
  // compat: what loading a file of this format needs, read without loading it.
  CompatNeeds (*compat)(const OpenedFile& file) = nullptr;
  // validate's NOT RUN: why a file of this format was not run where no
  // check says ("" for the default).
  const char* not_run = "";
};

// Every format, in recognition order.
const std::vector<const Format*>& Formats();

// The format a file claims before any ZIP is opened (its first bytes, or
// its name), or nullptr: a ZIP format's file, or none. `path` "-" or a
// special file: nullptr (a stream is never read twice).
const Format* FormatOfFile(const std::string& path);

// The ZIP format whose records `archive` has, or nullptr.
const Format* FormatOfArchive(const Archive& archive);

// Opens `path` ("-": standard input) as its format: a file that claims a
// format by its first bytes or name, else a ZIP archive TorchScript or .pt2
// reads (Archive::OpenModel: tsctl::Error kFormat/kIo otherwise, one line,
// the same for every command). A stream or special file longer than
// `max_input_bytes` is refused (kIo).
OpenedFile Open(const std::string& path, uint64_t max_input_bytes = kDefaultMaxInputBytes);

// A command's entry of `file`'s row (e.g. Need<&Format::graph>(file,
// "graph")); a row without one: tsctl::Error (kFormat), one line, "graph
// does not read <format> files". Every row has `inspect` and `checks`.
[[noreturn]] void NotForFormat(const OpenedFile& file, const char* command);
template <auto Entry>
auto Need(const OpenedFile& file, const char* command) {
  auto entry = file.format->*Entry;
  if (!entry) NotForFormat(file, command);
  return entry;
}

// The opened file's archive with a sound ZIP structure (RequireSoundStructure);
// what inspect, code and report read.
const Archive& SoundArchive(const OpenedFile& file);

// The row that compares `request`'s pair: the first `reads_pairs` format
// either side claims, else nullptr (two archives opened as theirs: TorchScript
// or .pt2 each, DiffArchives).
const Format* PairReader(const DiffRequest& request);

// What the ZIP formats' diff and report A B do with two opened archives.
DiffResult DiffOpened(const OpenedFile& a, const OpenedFile& b, const DiffOptions& options);
std::string ReportPairOpened(const OpenedFile& a, const OpenedFile& b, const DiffOptions& options);

}  // namespace tsctl
