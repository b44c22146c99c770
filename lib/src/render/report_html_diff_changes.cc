// The diff page's sections of changes: modules, parameters and constants
// (with their value statistics), code hunks side by side, operators and
// extra/ records, from DiffArchives's result.
#include <algorithm>
#include <cstdlib>

#include "report_html_diff.h"
#include "tsctl/escape.h"
#include "tsctl/text_diff.h"

namespace tsctl::report {
namespace {

constexpr size_t kMaxValue = 500;        // bytes of a field's value shown
constexpr size_t kOpenHunkLines = 2000;  // hunks are shown open until the page holds this many lines


std::string ValueCell(const std::string& v) { return "<td class=\"mono\">" + E(Ellipsis(v, kMaxValue)) + "</td>"; }

std::string Capped(size_t rows) {
  return rows > kMaxChangeRows ? More(rows - kMaxChangeRows, "changes", kDiffTool) : std::string();
}

// "@@ -12,7 +12,8 @@" -> 12 for '-', 12 for '+'.
int HunkStart(std::string_view header, char side) {
  const size_t at = header.find(std::string(" ") + side);
  return at == std::string_view::npos ? 0 : std::atoi(std::string(header.substr(at + 2, 12)).c_str());
}

std::string LineCells(int number, std::string_view text, const char* cls, bool code) {
  const TextEscapeOptions line{.keep_newlines = true, .escape_backslash = false};
  return "<td class=\"ln\">" + std::to_string(number) + "</td><td class=\"" + cls + "\">" +
         (code ? ColourCode(text) : HtmlEscape(text, line)) + "</td>";
}

constexpr const char* kNoLine = "<td class=\"ln\"></td><td class=\"e\"></td>";

std::string TensorSide(const std::string& dtype, const std::vector<int64_t>& shape) {
  return dtype + " " + ShapeText(shape);
}

std::string TensorRow(const TensorChange& t) {
  const bool added = t.kind == ChangeKind::kAdded, removed = t.kind == ChangeKind::kRemoved;
  std::string out = "<tr class=\"f\"><td class=\"mono\">" + E(t.name) + "</td><td>" + E(t.role) + "</td>" +
                    ChangeCell(t.kind) + "<td class=\"mono\">" + (added ? "" : E(TensorSide(t.dtype_a, t.shape_a))) +
                    "</td><td class=\"mono\">" + (removed ? "" : E(TensorSide(t.dtype_b, t.shape_b))) + "</td>";
  std::string note = t.note;
  if (t.values_compared) {
    const ValueStats& v = t.values;
    out += "<td class=\"n\">" + Grouped(v.differing) + " of " + Grouped(v.numel) + "</td><td class=\"n\">" +
           ShortNumber(v.max_abs) + "</td><td class=\"n\">" + ShortNumber(v.max_rel) + "</td>";
    if (v.nan_mismatch) note = "NaN on one side" + (note.empty() ? "" : "; " + note);
  } else {
    out += "<td></td><td></td><td></td>";
  }
  return out + "<td>" + E(note) + "</td></tr>";
}

}  // namespace

std::string ChangeCell(ChangeKind k) {
  const char* cls = k == ChangeKind::kAdded ? " class=\"add\"" : k == ChangeKind::kRemoved ? " class=\"del\"" : "";
  return std::string("<td") + cls + ">" + ChangeKindName(k) + "</td>";
}

std::string SideBySide(std::string_view unified_diff, bool code, size_t& budget) {
  std::string out = "<table class=\"sbs\"><tbody>";
  int la = 0, lb = 0;
  std::vector<std::string_view> removed, added;
  auto flush = [&] {
    for (size_t i = 0; i < std::max(removed.size(), added.size()); ++i) {
      out += "<tr>" + (i < removed.size() ? LineCells(la++, removed[i], "del", code) : std::string(kNoLine)) +
             (i < added.size() ? LineCells(lb++, added[i], "add", code) : std::string(kNoLine)) + "</tr>";
    }
    removed.clear();
    added.clear();
  };
  size_t left_out = 0;
  for (std::string_view line : SplitLines(unified_diff)) {
    if (budget == 0) {
      ++left_out;
      continue;
    }
    --budget;
    const char mark = line.empty() ? ' ' : line[0];
    const std::string_view text = line.empty() ? line : line.substr(1);
    if (mark == '-') {
      removed.push_back(text);
    } else if (mark == '+') {
      added.push_back(text);
    } else if (line.substr(0, 2) == "@@") {
      flush();
      la = HunkStart(line, '-');
      lb = HunkStart(line, '+');
      out += "<tr class=\"hunk\"><td colspan=\"4\">" + E(line) + "</td></tr>";
    } else {
      flush();
      out += "<tr>" + LineCells(la++, text, "", code) + LineCells(lb++, text, "", code) + "</tr>";
    }
  }
  flush();
  out += "</tbody></table>";
  if (left_out > 0) {
    out += "<p class=\"note\">" + Grouped(left_out) + " more lines not shown: the page shows " +
           Grouped(kMaxHunkLines) + " lines of hunks in all (tsctl diff shows them).</p>";
  }
  return out;
}

std::string DiffSectionStart(const char* id, const char* title, const SectionResult& s, size_t changes) {
  std::string out = std::string("<section id=\"") + id + "\"><h2>" + title + "</h2>";
  if (!s.compared) return out + "<p class=\"muted\">Not compared: " + E(s.not_compared_reason) + ".</p>";
  if (s.equal) return out + "<p class=\"muted\">Same.</p>";
  return out + "<p>Different: " + Grouped(changes) + (changes == 1 ? " change" : " changes") + ".</p>";
}

std::string ModulesChanges(const DiffResult& r) {
  std::string out = DiffSectionStart("modules", "Modules", r.Section(DiffSection::kModules), r.modules.size());
  if (r.modules.empty()) return out + "</section>";
  out += "<table><thead><tr><th>path</th><th>what</th><th>change</th><th>field</th><th>A</th><th>B</th></tr></thead>"
         "<tbody>";
  for (size_t i = 0; i < r.modules.size() && i < kMaxChangeRows; ++i) {
    const ModuleChange& c = r.modules[i];
    const std::string head = "<tr class=\"f\"><td class=\"mono\">" + (c.path.empty() ? "(root)" : E(c.path)) +
                             "</td><td>" + E(c.what) + "</td>" + ChangeCell(c.kind);
    if (c.fields.empty()) out += head + "<td></td><td></td><td></td></tr>";
    for (const FieldChange& f : c.fields) {
      out += head + "<td>" + E(f.field) + "</td>" + ValueCell(f.a) + ValueCell(f.b) + "</tr>";
    }
  }
  return out + "</tbody></table>" + Capped(r.modules.size()) + "</section>";
}

std::string TensorChanges(const char* id, const char* title, const SectionResult& s,
                          const std::vector<TensorChange>& changes) {
  std::string out = DiffSectionStart(id, title, s, changes.size());
  if (changes.empty()) return out + "</section>";
  out += "<table><thead><tr><th>tensor</th><th>role</th><th>change</th><th>A</th><th>B</th>"
         "<th class=\"n\">elements differing</th><th class=\"n\">max abs</th><th class=\"n\">max rel</th>"
         "<th>note</th></tr></thead><tbody>";
  for (size_t i = 0; i < changes.size() && i < kMaxChangeRows; ++i) out += TensorRow(changes[i]);
  return out + "</tbody></table>" + Capped(changes.size()) + "</section>";
}

std::string CodeChanges(const DiffResult& r, size_t& budget) {
  std::string out = DiffSectionStart("code", "Code", r.Section(DiffSection::kCode), r.code.size());
  if (!r.code.empty()) {
    out += "<p class=\"note\">Each changed method's hunks side by side: A on the left, B on the right.</p>";
  }
  for (size_t i = 0; i < r.code.size() && i < kMaxChangeRows; ++i) {
    const CodeChange& c = r.code[i];
    std::string name = c.method.empty() ? "class " + c.class_name : c.class_name;
    if (!c.method.empty()) name += (c.method[0] == '(' ? " " : ".") + c.method;
    std::string head = "<code>" + E(name) + "</code> <span class=\"c\">" + ChangeKindName(c.kind);
    if (!c.class_b.empty()) head += ", B: " + E(c.class_b);
    head += "</span>";
    if (c.unified_diff.empty()) {
      out += "<p class=\"f\">" + head + "</p>";
      continue;
    }
    const bool open = kMaxHunkLines - budget < kOpenHunkLines;
    out += std::string("<details class=\"f\"") + (open ? " open" : "") + "><summary>" + head + "</summary>" +
           SideBySide(c.unified_diff, true, budget) + "</details>";
  }
  return out + Capped(r.code.size()) + "</section>";
}

std::string OperatorChanges(const DiffResult& r) {
  const size_t n = r.operators_added.size() + r.operators_removed.size();
  std::string out = DiffSectionStart("operators", "Operators", r.Section(DiffSection::kOperators), n);
  if (n == 0) return out + "</section>";
  out += "<p>" + Grouped(r.operators_added.size()) + " added, " + Grouped(r.operators_removed.size()) +
         " removed.</p><table><thead><tr><th>operator</th><th>change</th></tr></thead><tbody>";
  size_t rows = 0;
  for (const auto* list : {&r.operators_added, &r.operators_removed}) {
    const ChangeKind kind = list == &r.operators_added ? ChangeKind::kAdded : ChangeKind::kRemoved;
    for (size_t i = 0; i < list->size() && rows < kMaxChangeRows; ++i, ++rows) {
      out += "<tr class=\"f\"><td class=\"mono\">" + E((*list)[i]) + "</td>" + ChangeCell(kind) + "</tr>";
    }
  }
  return out + "</tbody></table>" + Capped(n) + "</section>";
}

std::string FieldTable(const std::vector<FieldChange>& fields) {
  std::string out = "<table><thead><tr><th>field</th><th>A</th><th>B</th></tr></thead><tbody>";
  for (const FieldChange& f : fields) {
    out += "<tr class=\"f\"><td>" + E(f.field) + "</td>" + ValueCell(f.a) + ValueCell(f.b) + "</tr>";
  }
  return out + "</tbody></table>";
}

std::string ExtraChanges(const DiffResult& r, size_t& budget) {
  std::string out = DiffSectionStart("extra", "Extra files", r.Section(DiffSection::kExtra), r.extra.size());
  for (size_t i = 0; i < r.extra.size() && i < kMaxChangeRows; ++i) {
    const ExtraChange& c = r.extra[i];
    out += "<details class=\"f\" open><summary><code>extra/" + E(c.name) + "</code> <span class=\"c\">" +
           ChangeKindName(c.kind) + (c.content_type.empty() ? "" : ", " + E(c.content_type)) + "</span></summary>";
    if (!c.fields.empty()) out += FieldTable(c.fields);
    if (!c.json_changes.empty()) {
      out += "<table><thead><tr><th>JSON pointer</th><th>change</th><th>A</th><th>B</th></tr></thead><tbody>";
      for (size_t j = 0; j < c.json_changes.size() && j < kMaxChangeRows; ++j) {
        const JsonChange& k = c.json_changes[j];
        out += "<tr class=\"f\"><td class=\"mono\">" + (k.pointer.empty() ? "(root)" : E(k.pointer)) + "</td>" +
               ChangeCell(k.kind) + ValueCell(k.a) + ValueCell(k.b) + "</tr>";
      }
      out += "</tbody></table>" + Capped(c.json_changes.size());
    }
    if (!c.unified_diff.empty()) out += SideBySide(c.unified_diff, false, budget);
    out += "</details>";
  }
  return out + Capped(r.extra.size()) + "</section>";
}

}  // namespace tsctl::report
