// The diff page of `tsctl report A B` (tsctl/report.h), private to render/:
// report_html_diff.cc writes the frame, the summary and the sizes;
// report_html_diff_changes.cc the sections of the changes DiffArchives (or
// DiffPteFiles, for two ExecuTorch files) found.
// Every string from the archives is raw until these writers escape it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "report_html.h"
#include "tsctl/diff.h"

namespace tsctl::report {

// The most rows one table of changes lists, and the most lines of code and
// text hunks the page shows in all: `tsctl diff` has the rest.
inline constexpr size_t kMaxChangeRows = 5000;
inline constexpr size_t kMaxHunkLines = 20000;
inline constexpr const char* kDiffTool = "tsctl diff --json";

// One side of the diff page as the page shows it: its own page gathered
// (the summary, producer and size rows), the file's size, each record's
// bytes by the name the diff's records section gives it, and the warnings of
// reading it.
struct DiffSide {
  Page page;
  uint64_t file_size = 0;
  std::map<std::string, uint64_t> records;
  std::vector<std::string> warnings;
};

// The whole diff page of `r` (report_html_diff.cc): every section by id.
std::string DiffPage(const DiffResult& r, const DiffSide& a, const DiffSide& b);

// "<section id=ID><h2>TITLE</h2>" and what the section of the diff found, in
// one line ("Not compared: ...", "Same.", "Different: N changes.").
std::string DiffSectionStart(const char* id, const char* title, const SectionResult& s, size_t changes);

// A unified diff ("@@ -l,n +l,n @@" hunks) as a table of two columns, A's
// lines left and B's right, each with its line number; removed and added
// lines side by side. `code`: coloured as code, else escaped text. Counts
// the lines it writes against `budget` and stops with a note when spent.
std::string SideBySide(std::string_view unified_diff, bool code, size_t& budget);

// The cell of a change: "added" / "removed" on green / red, "changed" plain.
std::string ChangeCell(ChangeKind k);

// Fields that differ as a table of field, A's value and B's.
std::string FieldTable(const std::vector<FieldChange>& fields);

// The sections of the changes (report_html_diff_changes.cc).
std::string ModulesChanges(const DiffResult& r);
std::string TensorChanges(const char* id, const char* title, const SectionResult& s,
                          const std::vector<TensorChange>& changes);
std::string CodeChanges(const DiffResult& r, size_t& budget);
std::string OperatorChanges(const DiffResult& r);
std::string ExtraChanges(const DiffResult& r, size_t& budget);

}  // namespace tsctl::report
