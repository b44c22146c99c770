// The report page (tsctl/report.h), private to render/: the page of every
// kind of file (TorchScript, .pt2, ExecuTorch) is first gathered into one
// Page, then written by RenderPage. Every string in a Page that came from
// the file is raw: only the writers escape (HtmlEscape), so there is one
// place where untrusted text meets markup.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../text/units.h"  // ShapeText, Grouped
#include "tsctl/escape.h"
#include "tsctl/inspect.h"
#include "tsctl/report.h"
#include "tsctl/report_graph.h"

namespace tsctl::report {

// Text from the file, escaped for the page: the writers' one escaper.
inline std::string E(std::string_view s) { return HtmlEscape(s); }
// A number with one decimal ("12.5"): SVG coordinates, bench figures.
std::string OneDecimal(double v);
// Seconds with two decimals ("1.25 s"); a negative time reads 0.
std::string Seconds(double s);
// "12.5%" of `whole` ("" when it is 0).
std::string Percent(uint64_t part, uint64_t whole);

// An input or output of a method.
struct Value {
  std::string name;   // "x" ("" when the format keeps none)
  std::string type;   // "Tensor", "int", "Float tensor"
  std::string dtype;  // "float32" where known
  std::string shape;  // "[1, 3, 224, 224]" where known
};

struct Method {
  std::string name;       // "forward", a .pt2 model's name
  std::string signature;  // "forward(self, x: Tensor) -> Tensor" where the file has one
  std::vector<Value> inputs, outputs;
  std::string note;       // where the dtypes and shapes come from
};

struct Tensor {
  std::string name;  // the last part of its dotted name ("weight")
  std::string role;  // parameter, buffer, constant, ...
  std::string dtype;
  std::string shape;
  uint64_t numel = 0;
  uint64_t bytes = 0;
};

struct Module {
  std::string name;  // attribute name in the parent ("" for a root)
  std::string type;  // class, where known
  std::vector<Tensor> tensors;
  std::vector<Module> children;
  // Over the subtree, set by SumModules.
  uint64_t params = 0;  // elements of parameters
  uint64_t bytes = 0;   // bytes of all tensors
  uint64_t count = 0;   // modules, itself included
};

struct Bar {
  std::string label;
  uint64_t value = 0;
};

// One leaf of the size treemap: `bytes` of the file in `group` ("tensors",
// "code", ...), under `label` (a module, a record, a backend).
struct Block {
  std::string group;
  std::string label;
  uint64_t bytes = 0;
};

// A text record shown folded (code, extra/).
struct Text {
  std::string name;
  uint64_t size = 0;
  std::string text;
  std::string type;  // "json", "text", "binary", ...
  std::string note;  // "truncated", "not read: ...", ""
};

struct Page {
  std::string path;
  std::vector<std::pair<std::string, std::string>> summary;   // label, value
  std::vector<std::pair<std::string, std::string>> producer;  // key, value
  // What the format calls out in the overview, below the bytes' bar (an
  // ExecuTorch program's delegates); label, value.
  std::vector<std::pair<std::string, std::string>> overview;
  std::vector<Method> methods;
  std::string signature_note;
  std::vector<Module> modules;  // roots
  std::string modules_note;
  std::vector<Bar> operators;   // any order; the page sorts them
  std::string operators_note;
  std::vector<Block> sizes;
  std::string sizes_note;
  std::vector<Text> code;
  std::string code_note;
  std::vector<Text> extra;
  std::string extra_note;
  std::vector<std::string> warnings;
  ReportGraphs graph;  // laid out (or not: listed as text)
};

// The whole page (report_html.cc).
std::string RenderPage(Page page);

// The frame every page shares (report_html.cc): a page is PageStart, its
// sections, PageEnd. PageStart writes the head (the CSP, the CSS) and the
// header: `title` (raw: escaped here), links to the sections in `nav`, the
// filter tools; PageEnd the footer and the script.
struct NavLink {
  const char* id;
  const char* title;
};
std::string PageStart(const std::string& title, const std::vector<NavLink>& nav);
std::string PageEnd();
// A table of label and value rows (raw: escaped here).
std::string KeyValues(const std::vector<std::pair<std::string, std::string>>& rows);
// The note under a list cut at `n` fewer entries than it has: "N more
// `what` not listed (`tool` lists them all)."
std::string More(size_t n, const char* what, const char* tool = "tsctl inspect --json");
// The warnings, folded open, the first 200 listed ("" when none).
std::string Warnings(const std::vector<std::string>& warnings, const char* tool = "tsctl inspect --json");

// The overview the page opens with (report_html_overview.cc): the bytes
// by part (GroupSums, as the sizes section sums them), page.overview, each
// method's values in a line, the most called operators.
std::string OverviewSection(const Page& page);
std::map<std::string, uint64_t> GroupSums(const std::vector<Block>& blocks);
// The sections (report_html_sections.cc), each a <section> with its id.
std::string ModulesSection(const Page& page);
std::string OperatorsSection(const Page& page);
std::string SizesSection(const Page& page);
// Each method's graph, drawn in its folded views (report_html_graph.cc).
std::string GraphSection(const ReportGraphs& graphs);
std::string TextSection(const char* id, const char* title, const std::vector<Text>& texts, const std::string& note,
                        bool code);

// Inline SVG charts (report_html_svg.cc). `bars` sorted by value, largest
// first; the blocks in any order (grouped and sorted here).
// `aria` names the chart; `value_text` writes a bar's value (Grouped when null).
std::string HistogramSvg(const std::vector<Bar>& bars, const char* aria = "Operator calls",
                         std::string (*value_text)(uint64_t) = nullptr);
std::string TreemapSvg(const std::vector<Block>& blocks);
// Code escaped, with keywords, strings, comments and numbers in <span>s.
std::string ColourCode(std::string_view code);

// Helpers shared by the page builders (report_html_sections.cc).
// Sets params, bytes and count of every module of the trees.
void SumModules(std::vector<Module>& roots);
// The deepest module the page nests (a browser's parser stops nesting
// elements somewhere past 500 levels): deeper modules are listed flat, by
// their dotted path, under the module at this depth.
inline constexpr int kMaxTreeDepth = 48;
void CapDepth(std::vector<Module>& roots, int max_depth);
// A module tree from tensors named by dotted paths ("layer1.0.conv.weight"),
// for files that keep names but no module objects (.pt2, .pte): each
// Tensor's name is its full path on the way in, the last part on the way out.
std::vector<Module> ModulesFromNames(std::vector<Tensor> tensors);

// The treemap's parts of a ZIP archive (report_html_archive.cc): each
// record's stored bytes where `classify` puts it (`key_module` maps what
// names a tensor's data to the module label), and the ZIP headers.
struct RecordPlace {
  std::string group, label;
};
using RecordClassifier = RecordPlace (*)(const std::string& record,
                                         const std::map<std::string, std::string>& key_module);
std::vector<Block> RecordBlocks(const ArchiveInfo& info, const std::map<std::string, std::string>& key_module,
                                RecordClassifier classify);
// extra/ records as folded texts (report_html_archive.cc).
void ExtraTexts(const ArchiveInfo& info, Page& page);
// "layer1.0.conv1" -> "layer1.0", "" -> "(root)": tensors by module in the treemap.
std::string ModuleLabel(const std::string& path);
// The page of a TorchScript archive or a .pt2, gathered (report_html_archive.cc).
Page ArchivePage(const ReportContents& report);
// The page of a .pt2, gathered (report_html_pt2.cc).
Page Pt2Page(const ReportContents& report);
// The page of an ExecuTorch file, gathered (report_html_pte.cc); `path` names it.
Page PtePage(const PteFile& file, const std::string& path);
// `text` cut to at most `max` bytes on a UTF-8 boundary, with "…" when cut.
std::string Ellipsis(std::string_view text, size_t max);

}  // namespace tsctl::report
