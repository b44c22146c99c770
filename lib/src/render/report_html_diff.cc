// The diff page of `tsctl report A B`: the frame, the summary of both
// archives side by side, the format and records sections, and the sizes
// (each side gathered as its own page would be, ArchivePage or PtePage, then
// compared).
#include <algorithm>
#include <map>

#include "report_html_diff.h"
#include "tsctl/escape.h"
#include "tsctl/report.h"
#include "tsctl/text_util.h"

namespace tsctl::report {
namespace {

using Rows = std::vector<std::pair<std::string, std::string>>;

constexpr size_t kMaxSizeRows = 200;  // parts per size group whose bytes changed


// "+1.20 KiB", "-300 B", "0 B".
std::string Delta(uint64_t a, uint64_t b) {
  if (a == b) return "0 B";
  return (b > a ? "+" : "-") + HumanBytes(b > a ? b - a : a - b);
}

std::string OptBytes(const uint64_t* v) { return v ? HumanBytes(*v) : ""; }

// A's rows and B's side by side, matched by label (a label that repeats,
// as a .pt2's "note", by its occurrence); rows whose values differ marked.
std::string SideBySideRows(const Rows& a, const Rows& b) {
  std::vector<bool> used(b.size());
  std::map<std::string, std::vector<size_t>> in_b;  // label -> B's rows with it, last first
  for (size_t j = b.size(); j-- > 0;) in_b[b[j].first].push_back(j);
  std::string out = "<table class=\"kv\"><thead><tr><th></th><th>A</th><th>B</th></tr></thead><tbody>";
  auto row = [&](const std::string& k, const std::string* va, const std::string* vb) {
    const bool same = va && vb && *va == *vb;
    out += std::string("<tr class=\"f") + (same ? "" : " d") + "\"><th>" + E(k) + "</th><td>" + (va ? E(*va) : "") +
           "</td><td>" + (vb ? E(*vb) : "") + "</td></tr>";
  };
  for (const auto& [k, v] : a) {
    auto it = in_b.find(k);
    if (it == in_b.end() || it->second.empty()) {
      row(k, &v, nullptr);
      continue;
    }
    used[it->second.back()] = true;
    row(k, &v, &b[it->second.back()].second);
    it->second.pop_back();
  }
  for (size_t j = 0; j < b.size(); ++j) {
    if (!used[j]) row(b[j].first, nullptr, &b[j].second);
  }
  return out + "</tbody></table>";
}

size_t ChangeCount(const DiffResult& r, DiffSection s) {
  switch (s) {
    case DiffSection::kFormat: return r.format.size();
    case DiffSection::kRecords:  // records whose bytes another section compares count there
      return static_cast<size_t>(std::count_if(r.records.begin(), r.records.end(),
                                               [](const RecordChange& c) { return c.counts; }));
    case DiffSection::kModules: return r.modules.size();
    case DiffSection::kParameters: return r.parameters.size();
    case DiffSection::kConstants: return r.constants.size();
    case DiffSection::kCode: return r.code.size();
    case DiffSection::kOperators: return r.operators_added.size() + r.operators_removed.size();
    case DiffSection::kExtra: return r.extra.size();
  }
  return 0;
}

// What each section found, linked to it, and the verdict.
std::string Sections(const DiffResult& r) {
  std::string different, rows;
  for (const SectionResult& s : r.sections) {
    const char* name = DiffSectionName(s.section);
    const std::string found =
        !s.compared ? "not compared (" + E(s.not_compared_reason) + ")" : s.equal ? "same" : "different";
    const size_t covered = s.section == DiffSection::kRecords ? r.records.size() - ChangeCount(r, s.section) : 0;
    const std::string note =
        covered ? " (and " + Grouped(covered) + " whose contents other sections compare)" : std::string();
    if (!s.compared || s.equal) {
      rows += "<tr class=\"f\">";
    } else {
      rows += "<tr class=\"f d\">";
      different += (different.empty() ? "" : ", ") + std::string(name);
    }
    rows += std::string("<td><a href=\"#") + name + "\">" + name + "</a></td><td>" + found + note + "</td><td class=\"n\">" +
            Grouped(ChangeCount(r, s.section)) + "</td></tr>";
  }
  std::string out = different.empty() ? "<p>Result: the same in every section compared.</p>"
                                      : "<p>Result: different (" + different + ").</p>";
  if (r.formats_differ) out += "<p class=\"warn\">The two archives have different formats.</p>";
  return out + "<table><thead><tr><th>section</th><th>result</th><th class=\"n\">changes</th></tr></thead><tbody>" +
         rows + "</tbody></table>";
}

std::string DiffSummary(const DiffResult& r, const DiffSide& a, const DiffSide& b) {
  std::string out = "<section id=\"summary\"><h2>Summary</h2>" + Sections(r);
  out += "<h3>The archives</h3>" + SideBySideRows(a.page.summary, b.page.summary);
  if (!a.page.producer.empty() || !b.page.producer.empty()) {
    out += "<h3>Producer</h3>" + SideBySideRows(a.page.producer, b.page.producer);
  }
  std::vector<std::string> warnings = r.warnings;
  for (const std::string& w : a.warnings) warnings.push_back("A: " + w);
  for (const std::string& w : b.warnings) warnings.push_back("B: " + w);
  return out + Warnings(warnings, kDiffTool) + "</section>";
}

std::string FormatSection(const DiffResult& r) {
  std::string out = DiffSectionStart("format", "Format", r.Section(DiffSection::kFormat), r.format.size());
  if (r.formats_differ) {
    out += "<p class=\"warn\">The two archives have different formats (kind, layout or format version).</p>";
  }
  if (!r.format.empty()) out += FieldTable(r.format);
  return out + "</section>";
}

std::map<std::string, uint64_t> RecordSizes(const ArchiveInfo& info) {
  std::map<std::string, uint64_t> out;
  for (const RecordInfo& rec : info.records) out[rec.name] = rec.size;
  return out;
}

std::string RecordRow(const RecordChange& c, const std::map<std::string, uint64_t>& sa,
                      const std::map<std::string, uint64_t>& sb) {
  const auto ia = sa.find(c.name), ib = sb.find(c.name);
  const uint64_t* a = c.kind == ChangeKind::kAdded || ia == sa.end() ? nullptr : &ia->second;
  const uint64_t* b = c.kind == ChangeKind::kRemoved || ib == sb.end() ? nullptr : &ib->second;
  std::string fields;
  for (const FieldChange& f : c.fields) {
    if (f.field == "size") continue;
    fields += (fields.empty() ? "" : "; ") + f.field + " " + f.a + (f.a.empty() || f.b.empty() ? "" : " \u2192 ") + f.b;
  }
  return "<tr class=\"f\"><td class=\"mono\">" + E(c.name) + "</td>" + ChangeCell(c.kind) + "<td class=\"n\">" +
         OptBytes(a) + "</td><td class=\"n\">" + OptBytes(b) + "</td><td class=\"n\">" +
         Delta(a ? *a : 0, b ? *b : 0) + "</td><td class=\"mono\">" + E(fields) + "</td><td>" +
         (c.counts ? "" : E(c.covered_by)) + "</td></tr>";
}

std::string RecordsSection(const DiffResult& r, const DiffSide& a, const DiffSide& b) {
  const SectionResult& s = r.Section(DiffSection::kRecords);
  std::string out = DiffSectionStart("records", "Records", s, ChangeCount(r, DiffSection::kRecords));
  if (r.records.empty()) return out + "</section>";
  if (s.equal) out += "<p class=\"note\">The records below differ only in what another section compares.</p>";
  out += "<table><thead><tr><th>record</th><th>change</th><th class=\"n\">A size</th><th class=\"n\">B size</th>"
         "<th class=\"n\">delta</th><th>other fields</th><th>contents compared in</th></tr></thead><tbody>";
  for (size_t i = 0; i < r.records.size() && i < kMaxChangeRows; ++i) {
    out += RecordRow(r.records[i], a.records, b.records);
  }
  out += "</tbody></table>";
  if (r.records.size() > kMaxChangeRows) out += More(r.records.size() - kMaxChangeRows, "changes", kDiffTool);
  return out + "</section>";
}

// Bytes per group, and per part of each group, of both sides.
struct SizeRow {
  uint64_t a = 0, b = 0;
};
using SizeTable = std::map<std::string, std::pair<SizeRow, std::map<std::string, SizeRow>>>;

SizeTable SizeGroups(const Page& a, const Page& b) {
  SizeTable t;
  for (const Block& x : a.sizes) {
    t[x.group].first.a += x.bytes;
    t[x.group].second[x.label].a += x.bytes;
  }
  for (const Block& x : b.sizes) {
    t[x.group].first.b += x.bytes;
    t[x.group].second[x.label].b += x.bytes;
  }
  return t;
}

std::string SizeRowHtml(const std::string& label, const SizeRow& s, const char* cls) {
  return std::string("<tr class=\"f\"><td") + cls + ">" + E(label) + "</td><td class=\"n\">" + HumanBytes(s.a) +
         "</td><td class=\"n\">" + HumanBytes(s.b) + "</td><td class=\"n\">" + Delta(s.a, s.b) + "</td></tr>";
}

// The parts of one group whose bytes changed, most changed first.
std::string ChangedParts(const std::string& group, const std::map<std::string, SizeRow>& parts) {
  std::vector<std::pair<std::string, SizeRow>> changed;
  for (const auto& [label, s] : parts) {
    if (s.a != s.b) changed.emplace_back(label, s);
  }
  if (changed.empty()) return "";
  auto gap = [](const SizeRow& s) { return s.a > s.b ? s.a - s.b : s.b - s.a; };
  std::stable_sort(changed.begin(), changed.end(),
                   [&](const auto& x, const auto& y) { return gap(x.second) > gap(y.second); });
  std::string out = "<details><summary>" + E(group) + ": " + Grouped(changed.size()) +
                    (changed.size() == 1 ? " part" : " parts") +
                    " changed in size</summary><table><thead><tr><th>part</th><th class=\"n\">A</th>"
                    "<th class=\"n\">B</th><th class=\"n\">delta</th></tr></thead><tbody>";
  for (size_t i = 0; i < changed.size() && i < kMaxSizeRows; ++i) {
    out += SizeRowHtml(changed[i].first, changed[i].second, " class=\"mono\"");
  }
  return out + "</tbody></table></details>";
}

std::string SizesSection(const DiffSide& a, const DiffSide& b) {
  std::string out = "<section id=\"sizes\"><h2>Sizes</h2><p class=\"note\">Bytes as stored in each file, grouped as "
                    "each archive's own report groups them.</p><table><thead><tr><th>part</th><th class=\"n\">A</th>"
                    "<th class=\"n\">B</th><th class=\"n\">delta</th></tr></thead><tbody>";
  std::string parts;
  for (const auto& [group, g] : SizeGroups(a.page, b.page)) {
    out += SizeRowHtml(group, g.first, "");
    parts += ChangedParts(group, g.second);
  }
  const uint64_t fa = a.file_size, fb = b.file_size;
  out += "<tr><th>file</th><th class=\"n\">" + HumanBytes(fa) + "</th><th class=\"n\">" + HumanBytes(fb) +
         "</th><th class=\"n\">" + Delta(fa, fb) + "</th></tr></tbody></table>" + parts;
  return out + "<div class=\"cols\"><div><h3>A</h3>" + TreemapSvg(a.page.sizes) + "</div><div><h3>B</h3>" +
         TreemapSvg(b.page.sizes) + "</div></div></section>";
}

}  // namespace

std::string DiffPage(const DiffResult& r, const DiffSide& a, const DiffSide& b) {
  static const std::vector<NavLink> kNav = {
      {"summary", "Summary"}, {"format", "Format"},         {"records", "Records"},     {"sizes", "Sizes"},
      {"modules", "Modules"}, {"parameters", "Parameters"}, {"constants", "Constants"}, {"code", "Code"},
      {"operators", "Operators"}, {"extra", "Extra files"}};
  size_t budget = kMaxHunkLines;
  std::string out = PageStart(r.path_a + " \u2192 " + r.path_b, kNav);
  out += DiffSummary(r, a, b) + "\n" + FormatSection(r) + "\n" + RecordsSection(r, a, b) + "\n" + SizesSection(a, b) +
         "\n" + ModulesChanges(r) + "\n";
  out += TensorChanges("parameters", "Parameters", r.Section(DiffSection::kParameters), r.parameters) + "\n";
  out += TensorChanges("constants", "Constants", r.Section(DiffSection::kConstants), r.constants) + "\n";
  out += CodeChanges(r, budget) + "\n" + OperatorChanges(r) + "\n" + ExtraChanges(r, budget) + "\n";
  return out + PageEnd();
}

}  // namespace tsctl::report

namespace tsctl {

std::string RenderReportDiffHtml(const ReportDiffContents& report) {
  using namespace report;
  auto side = [](const ReportContents& c) {
    return DiffSide{ArchivePage(c), c.info.file_size, RecordSizes(c.info), c.warnings};
  };
  return DiffPage(report.diff, side(report.a), side(report.b));
}

std::string RenderReportDiffHtml(const ReportPteDiffContents& report) {
  using namespace report;
  // A PteFile keeps no warnings: what the reader could not take, it refused.
  return DiffPage(report.diff, {PtePage(report.a, report.diff.path_a), report.a.file_size, report.records_a, {}},
                  {PtePage(report.b, report.diff.path_b), report.b.file_size, report.records_b, {}});
}

}  // namespace tsctl
