// `tsctl report`: one self-contained HTML page about an archive, to open
// offline (a CI artifact, an email attachment). All CSS inline, a few lines
// of inline script for folding and search (the page reads without them),
// charts drawn by tsctl as inline SVG, no URL outside the page, and a
// Content-Security-Policy that forbids fetching anything. Tensors are
// summarised, never embedded, and code is bounded, so a page stays small.
// Every string from the archive is HTML-escaped (HtmlEscape, escape.h).
// `tsctl report A B` writes such a page about the diff of two archives.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/diff.h"
#include "tsctl/inputs.h"
#include "tsctl/inspect.h"
#include "tsctl/pte.h"
#include "tsctl/report_graph.h"

namespace tsctl {

// One code record as the page shows it.
struct ReportCode {
  std::string record;       // "code/__torch__.py"
  uint64_t size = 0;        // the record's size
  std::string text;         // its text, the first ReportOptions::max_code_record bytes
  bool truncated = false;   // `text` is only the start of the record
  bool omitted = false;     // not read: the page's code budget was spent first
  std::string error;        // why it could not be read ("" if it could)
};

// What the page of a TorchScript archive or a .pt2 shows: inspect's result
// and what inspect does not keep (the code's text, the producer record, the
// stored example inputs).
struct ReportContents {
  ArchiveInfo info;
  std::vector<ReportCode> code;  // TorchScript code records, in archive order
  // extra/producer_info.json (tsctl stamp's record) flattened to
  // "key" / "ci.GITHUB_SHA" -> value text; empty if absent or not a JSON object.
  std::vector<std::pair<std::string, std::string>> producer;
  ArchiveInputs stored_inputs;        // forward's stored example inputs (InputsFromArchive)
  std::vector<std::string> warnings;  // what the report could not read, beside info.warnings
  ReportGraphs graphs;                // each program's graph, laid out (ReportOptions::graphs)
};

struct ReportOptions {
  uint64_t max_code_record = uint64_t{256} << 10;  // text shown per code record
  uint64_t max_code_total = uint64_t{2} << 20;     // text shown over all code records
  bool graphs = true;                              // read and lay out the graphs (LayoutReportGraphs)
  GraphLayoutOptions layout;
  // A TorchScript archive's graph is LibTorch's to make: BuildReport asks
  // the LibTorch child for forward's (TorchScriptReportGraphs) by `path`.
  // kAuto: for archives of at most `auto_graph_bytes`, and what stops it
  // (no LibTorch in this build, an archive LibTorch refuses) becomes the
  // section's note; kAlways: for any size, and what stops it is the
  // report's error; kNever: not asked (the note says how).
  enum class TorchScriptGraph { kNever, kAuto, kAlways } torchscript_graph = TorchScriptGraph::kNever;
  std::string path;  // the archive's file ("" or "-": no graph)
  uint64_t auto_graph_bytes = uint64_t{256} << 20;
  // The graph is drawn only from an archive that passes validate's static
  // checks (Graph checks it); --allow-load-hooks lets ts.hooks through.
  bool allow_load_hooks = false;
};

// Inspects `archive` (TorchScript or .pt2) and reads what the page needs
// besides. Throws tsctl::Error only where Inspect does; a code record or a
// producer record that cannot be read becomes a warning.
ReportContents BuildReport(const Archive& archive, const ReportOptions& options = {});

// What the page of two archives shows (tsctl report A B): DiffArchives's
// result, and each archive as BuildReport reads it without its code's text
// (the summary, the producer record and the sizes of each side).
struct ReportDiffContents {
  ReportContents a, b;
  DiffResult diff;
};

// Reads `a` and `b` (TorchScript or .pt2 each, as DiffArchives takes them)
// and compares them with `options`. Throws tsctl::Error, its message starting
// with the archive's name, only if one cannot be inspected at all.
ReportDiffContents BuildDiffReport(const Archive& a, const Archive& b, const DiffOptions& options = {});

// What the page of two ExecuTorch files (.pte, .ptd, .bpte) shows: each
// file as ReadPte reads it with its chains (the summary, sizes and methods
// of each side), the bytes of each record the diff's records section names
// ("delegate XnnpackBackend", "named data KEY", "total"), and DiffPteFiles's
// result.
struct ReportPteDiffContents {
  PteFile a, b;
  std::map<std::string, uint64_t> records_a, records_b;
  DiffResult diff;
};

// Reads the ExecuTorch files at `path_a` and `path_b`, each opened once, and
// compares them as DiffPteFiles does (`max_input_bytes` as there). Throws
// tsctl::Error as DiffPteFiles does: a side that is no ExecuTorch file gets
// the reader's line about it.
ReportPteDiffContents BuildPteDiffReport(const std::string& path_a, const std::string& path_b,
                                         const DiffOptions& options = {}, uint64_t max_input_bytes = uint64_t{4} << 30);

// ---- Rendering (lib/src/render/report_*.cc) ----

// The page, with the sections (by id) summary, signature, modules,
// operators, sizes, code and extra, each present even when empty.
std::string RenderReportHtml(const ReportContents& report);

// The page of an ExecuTorch file (.pte, .ptd, .bpte) read by ReadPte (with
// PteReadOptions::chains, its code section holds each method's instruction
// chains as tsctl graph prints them); `path` names it; `graphs` as
// PteReportGraphs and LayoutReportGraphs make them.
std::string RenderReportHtml(const PteFile& file, const std::string& path, const ReportGraphs& graphs = {});

// The page of two archives, with the sections (by id) summary, format,
// records, sizes, modules, parameters, constants, code (each changed
// method's hunks side by side, A left, B right), operators and extra, each
// present even when empty or not compared.
std::string RenderReportDiffHtml(const ReportDiffContents& report);

// The page of two ExecuTorch files, with the same sections by id: the
// modules section holds the methods' changes, parameters the stored
// tensors' (values compared), code each method's instruction chains as
// hunks side by side; constants and extra say why they are not compared.
std::string RenderReportDiffHtml(const ReportPteDiffContents& report);

}  // namespace tsctl
