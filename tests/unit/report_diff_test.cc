// tsctl report A B's page (lib/src/render/report_html_diff*.cc): every
// section by id on testdata/diff pairs and .pt2 pairs, value statistics,
// code hunks side by side, size deltas, every string of a DiffResult escaped,
// and the testdata/escape archives compared.
#include <catch2/catch.hpp>

#include <string>

#include "../../lib/src/render/report_html_diff.h"
#include "report_checks.h"
#include "test_util.h"
#include "tsctl/report.h"

using namespace tsctl;
using tsctl::test::Count;
using tsctl::test::RequireDiffSections;

namespace {

bool Has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::string PageOf(const std::string& a, const std::string& b, const DiffOptions& options = {}) {
  Archive x = Archive::OpenModel(OpenFileSource(test::TestData(a)));
  Archive y = Archive::OpenModel(OpenFileSource(test::TestData(b)));
  return RenderReportDiffHtml(BuildDiffReport(x, y, options));
}

}  // namespace

TEST_CASE("report A B: one weight changed, with its value statistics", "[report]") {
  const std::string page = PageOf("diff/base.pt", "diff/weight.pt");
  RequireDiffSections(page);
  CHECK(Has(page, "<p>Result: different (parameters).</p>"));
  CHECK(Has(page, "<td class=\"mono\">head.weight</td><td>parameter</td><td>changed</td>"));
  CHECK(Has(page, "<td class=\"n\">1 of 24</td><td class=\"n\">0.5</td><td class=\"n\">2.79195</td>"));
  // data/4's CRC changed: the parameters section compares its contents.
  CHECK(Has(page, "<td class=\"mono\">data/4</td><td>changed</td>"));
  CHECK(Has(page, "<td>parameters</td></tr>"));
  CHECK(Count(page, "<svg") == 2);             // A's treemap and B's
  // The summary's count is the section's own: a record another section
  // covers is not a records change ("same" beside "1 changes" was two numbers).
  CHECK(Has(page, "<td><a href=\"#records\">records</a></td><td>same (and 1 whose contents other sections compare)"
                  "</td><td class=\"n\">0</td>"));
}

TEST_CASE("report A B: diff's options: a tolerance, sections left out", "[report]") {
  DiffOptions options;
  options.atol = 0.5;
  options.sections[static_cast<int>(DiffSection::kCode)] = false;
  const std::string page = PageOf("diff/base.pt", "diff/weight.pt", options);
  RequireDiffSections(page);
  CHECK(Has(page, "<p>Result: the same in every section compared.</p>"));
  CHECK(Count(page, "<p class=\"muted\">Not compared: ignored.</p>") == 1);
  CHECK(Has(page, "<td><a href=\"#code\">code</a></td><td>not compared (ignored)</td>"));
}

TEST_CASE("report A B: code hunks side by side, operators added", "[report]") {
  const std::string page = PageOf("diff/base.pt", "diff/op_added.pt");
  RequireDiffSections(page);
  CHECK(Has(page, "<p>Result: different (code, operators).</p>"));
  CHECK(Has(page, "<code>__torch__.DiffNet.forward</code>"));
  CHECK(Has(page, "<tr class=\"hunk\"><td colspan=\"4\">@@ -3,4 +3,4 @@</td></tr>"));
  // The changed line: A's on the left, B's on the right, on one row.
  CHECK(Has(page, "<tr><td class=\"ln\">6</td><td class=\"del\">    <span class=\"k\">return</span> y</td>"
                  "<td class=\"ln\">6</td><td class=\"add\">    <span class=\"k\">return</span> torch.add("));
  CHECK(Has(page, "<td class=\"mono\">aten::sigmoid</td><td class=\"add\">added</td>"));
  CHECK(Has(page, "<td class=\"n\">+13 B</td>"));  // code/__torch__.py's stored bytes in the sizes
}

TEST_CASE("report A B: extra/ by JSON pointer and text; the same archive is the same", "[report]") {
  const std::string page = PageOf("diff/base.pt", "diff/metadata.pt");
  RequireDiffSections(page);
  CHECK(Has(page, "<code>extra/meta.json</code>"));
  CHECK(Has(page, "<td class=\"mono\">/owner</td><td class=\"add\">added</td>"));
  CHECK(Has(page, "<table class=\"sbs\">"));  // notes.txt's hunks
  const std::string same = PageOf("diff/base.pt", "diff/base.pt");
  RequireDiffSections(same);
  CHECK(Has(same, "<p>Result: the same in every section compared.</p>"));
  CHECK(Count(same, "<p class=\"muted\">Same.</p>") == 8);
}

TEST_CASE("report A B: .pt2 archives, and a .pt2 against TorchScript", "[report]") {
  const std::string page = PageOf("pt2/cnn.pt2", "pt2/cnn_weight.pt2");
  RequireDiffSections(page);
  CHECK(Has(page, "<td class=\"mono\">fc.weight</td><td>parameter</td><td>changed</td>"));
  CHECK(Has(page, "<td class=\"mono\">/step</td><td>changed</td>"));
  const std::string mixed = PageOf("diff/base.pt", "pt2/cnn.pt2");
  RequireDiffSections(mixed);
  CHECK(Has(mixed, "The two archives have different formats"));
}

TEST_CASE("report A B: every string of a diff is escaped", "[report]") {
  const std::string evil = "<script>alert('x')</script>\"><img src=x onerror=y>\x1b[31m\xff";
  ReportDiffContents r;
  r.a.info.path = r.b.info.path = evil;
  r.a.producer = {{evil, evil}};
  r.b.warnings = {evil};
  DiffResult& d = r.diff;
  d.path_a = d.path_b = evil;
  for (int i = 0; i < kDiffSectionCount; ++i) {
    d.sections.push_back({static_cast<DiffSection>(i), i != 0, evil, false});
  }
  d.format = {{evil, evil, evil}};
  d.records = {{evil, ChangeKind::kChanged, {{evil, evil, evil}}, evil, false}};
  d.modules = {{evil, evil, ChangeKind::kRemoved, {{evil, evil, evil}}}};
  TensorChange t{evil, evil, ChangeKind::kChanged, evil, evil, {2}, {2}, true, {2, 1, 0.5, 1, true}, evil};
  d.parameters = d.constants = {t};
  const std::string hunk = "@@ -1,2 +1,2 @@\n " + evil + "\n-" + evil + "\n+" + evil + "x\n";
  d.code = {{evil, evil, ChangeKind::kChanged, hunk, evil}, {evil, "", ChangeKind::kAdded, "", ""}};
  d.operators_added = d.operators_removed = {evil};
  d.extra = {{evil, ChangeKind::kChanged, evil, {{evil, ChangeKind::kAdded, evil, evil}}, hunk, {{evil, evil, evil}}}};
  d.warnings = {evil};
  const std::string html = RenderReportDiffHtml(r);
  RequireDiffSections(html);
  for (const char* raw : {"<script>alert", "<img", "onerror=y>", "\x1b", "\xff"}) {
    CHECK(html.find(raw) == std::string::npos);
  }
  CHECK(Count(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=y&gt;") >= 30);
  CHECK(Has(html, "Not compared: &lt;script&gt;"));
}

TEST_CASE("report A B: the escape archives' strings reach the page escaped", "[report]") {
  using Pair = std::pair<const char*, const char*>;
  for (const auto& [a, b] : {Pair{"escape/debug_file_name.pt", "escape/string_constant.pt"},
                             Pair{"escape/prints.pt", "escape/returns_bytes.pt"},
                             Pair{"escape/op_names.pt2", "pt2/cnn.pt2"}, Pair{"escape/op_names.ptl", "mobile.ptl"}}) {
    INFO(a << " " << b);
    const std::string page = PageOf(a, b);
    RequireDiffSections(page);
    CHECK(page.find('\x1b') == std::string::npos);
    CHECK(page.find('\x07') == std::string::npos);
    CHECK(page.find("\xff") == std::string::npos);
  }
  // The operator with an escape sequence in its name is listed, escaped.
  CHECK(Has(PageOf("mobile.ptl", "escape/op_names.ptl"), "aten::\\x1b[7m"));
}

TEST_CASE("report A B: hunks past the page's budget are counted, not shown", "[report]") {
  std::string diff = "@@ -1,30 +1,30 @@\n";
  for (int i = 0; i < 30; ++i) diff += "-a" + std::to_string(i) + "\n+b" + std::to_string(i) + "\n";
  size_t budget = 11;
  const std::string html = report::SideBySide(diff, false, budget);
  CHECK(budget == 0);
  CHECK(Count(html, "<td class=\"del\">") == 5);
  CHECK(Count(html, "<td class=\"add\">") == 5);
  CHECK(Has(html, "50 more lines not shown"));
}
