// tsctl report A B of two ExecuTorch files (BuildPteDiffReport, and
// RenderReportDiffHtml over it): the diff page's sections by id on pairs of
// testdata/pte (and, in the [corpus] cases, ../shared/corpus/pte) and on copies with one byte of a stored tensor
// changed, record and size deltas, value statistics, chains side by side,
// every string from the files escaped, and a side that is no ExecuTorch file.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "report_checks.h"
#include "test_util.h"
#include "tsctl/error.h"
#include "tsctl/report.h"

using namespace tsctl;
using tsctl::test::Count;
using tsctl::test::RequireDiffSections;

namespace {

bool Has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// A file of ../shared/corpus/pte, for the [corpus] cases: present, or the case fails.
std::string Corpus(const std::string& name) {
  const char* env = std::getenv("TSCTL_SHARED_CORPUS");
  const std::string path = std::string(env && *env ? env : TSCTL_SHARED_CORPUS) + "/pte/" + name;
  REQUIRE(std::filesystem::exists(path));
  return path;
}

std::string Pte(const std::string& name) { return test::TestData("pte/" + name); }

// A copy of `path` with the byte at `offset` changed, in the temp dir.
std::string Patched(const std::string& path, uint64_t offset) {
  std::string bytes = test::Slurp(path);
  REQUIRE(offset < bytes.size());
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x5a);
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("tsctl_report_pte_diff_" + std::to_string(::getpid()) + "_" +
                            std::filesystem::path(path).filename().string())).string();
  std::ofstream(out, std::ios::binary) << bytes;
  return out;
}

std::string PageOf(const std::string& a, const std::string& b, const DiffOptions& options = {}) {
  return RenderReportDiffHtml(BuildPteDiffReport(a, b, options));
}

}  // namespace

TEST_CASE("report A B of .pte files: delegates and named data grown, with size deltas", "[report][pte][corpus]") {
  const std::string a = Corpus("djl-executorch-engine__3022a8a3_stress_mlp.pte");
  const std::string b = Corpus("djl-executorch-engine__7777a90a_stress_mlp.pte");
  const std::string page = PageOf(a, b);
  RequireDiffSections(page);
  CHECK(Has(page, "<p>Result: different (records, modules).</p>"));
  // records: the size breakdown's parts with A's size, B's and the delta.
  CHECK(Has(page, "<td class=\"mono\">delegate XnnpackBackend</td><td>changed</td><td class=\"n\">4.69 KiB</td>"
                  "<td class=\"n\">5.48 KiB</td><td class=\"n\">+816 B</td>"));
  CHECK(Has(page, "<td class=\"mono\">named data 95841a1a1f325c2544e16f2bff493193eacad448ad8a3d6e484d42b223843583"
                  "</td><td class=\"add\">added</td><td class=\"n\"></td><td class=\"n\">256 KiB</td>"
                  "<td class=\"n\">+256 KiB</td>"));
  // sizes: both files' breakdowns, the file's delta, both treemaps.
  CHECK(Has(page, "<tr><th>file</th><th class=\"n\">2.08 MiB</th><th class=\"n\">2.58 MiB</th>"
                  "<th class=\"n\">+515 KiB</th></tr>"));
  CHECK(Has(page, "named_data: 4 parts changed in size"));
  CHECK(Count(page, "<svg") == 2);
  // modules: the method's second delegate, as diff names it.
  CHECK(Has(page, "<td class=\"mono\">forward.delegate[1]</td><td>delegate</td><td>changed</td>"));
  CHECK(Has(page, "<p class=\"muted\">Not compared: ExecuTorch files keep their constants among the stored "
                  "tensors: see parameters.</p>"));
  CHECK(Has(page, "<p class=\"muted\">Not compared: ExecuTorch files have no extra/ records.</p>"));
  CHECK(Has(page, "<th>kind</th><td>ExecuTorch program (ET12)</td><td>ExecuTorch program (ET12)</td>"));
}

TEST_CASE("report A B of .pte files: signatures, constants by value, chains side by side", "[report][pte][corpus]") {
  const std::string a = Corpus("executorch__b55978fe_conv2d_layer7_conv4b_2.pte");
  const std::string b = Corpus("executorch__3457a90d_conv2d_layer3_conv4b_2.pte");
  const std::string page = PageOf(a, b);
  RequireDiffSections(page);
  CHECK(Has(page, "<p>Result: different (modules, parameters, code).</p>"));
  CHECK(Has(page, "<td class=\"mono\">forward.input[0]</td><td>input</td><td>changed</td><td>value</td>"
                  "<td class=\"mono\">Tensor Float [1, 128, 28, 28]</td>"
                  "<td class=\"mono\">Tensor Float [1, 128, 8, 8]"));
  CHECK(Has(page, "<td class=\"mono\">forward.value0</td><td>constant</td><td>changed</td>"
                  "<td class=\"mono\">Char [128, 128, 3, 3]</td><td class=\"mono\">Char [128, 128, 3, 3]</td>"
                  "<td class=\"n\">146,889 of 147,456</td><td class=\"n\">254</td>"));
  CHECK(Has(page, "<code>chains (forward)</code> <span class=\"c\">changed</span>"));
  CHECK(Has(page, "<tr class=\"hunk\"><td colspan=\"4\">@@ -1,4 +1,4 @@</td></tr>"));
  CHECK(Count(page, "<td class=\"del\">") == 3);  // the three changed instructions, A's beside B's
  CHECK(Count(page, "<td class=\"add\">") == 3);
  // diff's options apply: the code section left out says so.
  DiffOptions options;
  options.sections[static_cast<int>(DiffSection::kCode)] = false;
  const std::string ignored = PageOf(a, b, options);
  CHECK(Has(ignored, "<td><a href=\"#code\">code</a></td><td>not compared (ignored)</td>"));
  CHECK_FALSE(Has(ignored, "<table class=\"sbs\">"));
}

TEST_CASE("report A B of .pte files: a file against itself is the same", "[report][pte]") {
  for (const char* name : {"linear_xnnpack.pte", "linear_external.ptd", "linear.bpte"}) {
    const std::string f = Pte(name);
    INFO(name);
    const std::string page = PageOf(f, f);
    RequireDiffSections(page);
    CHECK(Has(page, "<p>Result: the same in every section compared.</p>"));
    CHECK(Count(page, "<p class=\"muted\">Same.</p>") == 6);
    CHECK(Count(page, "<p class=\"muted\">Not compared: ") == 2);
  }
}

void ConstantChangedNamesTensor(const std::string& f) {
  {
    const PteFile pte = ReadPte(f);
    REQUIRE_FALSE(pte.program.tensors.empty());
    const PteStoredTensor& t = pte.program.tensors[0];
    const std::string g = Patched(f, t.tensor.data_offset);
    const std::string page = PageOf(f, g);
    std::filesystem::remove(g);
    RequireDiffSections(page);
    CHECK(Has(page, "<p>Result: different (parameters).</p>"));
    const std::string name = t.method + ".value" + std::to_string(t.value_index);
    CHECK(Has(page, "<tr class=\"f\"><td class=\"mono\">" + name + "</td><td>constant</td><td>changed</td>"));
    CHECK(Has(page, "<td class=\"n\">1 of "));
  }
}

TEST_CASE("report A B of .pte files: one constant byte changed names that tensor", "[report][pte]") {
  ConstantChangedNamesTensor(Pte("linear.pte"));
  const std::string ptd = Pte("linear_external.ptd");
  {
    const PteFile data = ReadPte(ptd);
    REQUIRE_FALSE(data.flat_tensor.tensors.empty());
    const PteDataTensor& t = data.flat_tensor.tensors[0];
    const std::string g = Patched(ptd, data.flat_tensor.segments.at(t.segment_index).file_offset + t.offset);
    const std::string page = PageOf(ptd, g);
    std::filesystem::remove(g);
    RequireDiffSections(page);
    CHECK(Has(page, "<tr class=\"f\"><td class=\"mono\">" + t.fqn + "</td><td>data</td><td>changed</td>"));
    CHECK(Has(page, "<th>kind</th><td>ExecuTorch flat_tensor (FT01)</td>"));
  }
}

TEST_CASE("corpus: report A B of .pte files: one inline constant byte changed names that tensor", "[report][pte][corpus]") {
  ConstantChangedNamesTensor(Corpus("executorch__42b8643f_ModuleLinear-no-constant-segment.pte"));
}

TEST_CASE("report A B of .pte files: a delegate blob changed, sizes alike", "[report][pte]") {
  const std::string page = PageOf(Pte("linear_xnnpack_tanh.pte"), Pte("linear_xnnpack_sigmoid.pte"));
  RequireDiffSections(page);
  CHECK(Has(page, "<p>Result: different (records).</p>"));
  CHECK(Has(page, "delegate blob forward.delegate[0] (XnnpackBackend)"));
}

TEST_CASE("report A B of a .pte and a TorchScript archive: the reader's line", "[report][pte]") {
  const std::string f = Pte("linear_xnnpack.pte");
  const std::string pt = test::TestData("traced_cnn.pt");
  try {
    BuildPteDiffReport(f, pt);
    FAIL("a TorchScript archive was read as an ExecuTorch file");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kFormat);
    CHECK(std::string(e.what()).rfind(pt + ": not an ExecuTorch program", 0) == 0);
  }
  CHECK_THROWS_AS(BuildPteDiffReport(f + ".missing", f), Error);
}

TEST_CASE("report A B of .pte files: every string from the files is escaped", "[report][pte]") {
  const std::string evil = "<script>alert('x')</script>\"><img src=x onerror=y>\x1b[31m\xff";
  ReportPteDiffContents r;
  for (PteFile* f : {&r.a, &r.b}) {
    f->identifier = evil;
    f->header = {true, evil, 32, 0};
    PteMethod m;
    m.name = evil;
    m.delegates.push_back({});
    m.delegates[0].backend_id = evil;
    f->program.methods.push_back(m);
    f->program.named_data.push_back({evil, 0, 0});
    f->sizes.push_back({PteSizeKind::kDelegate, evil, false, 7});
  }
  r.records_a = r.records_b = {{evil, 5}};
  DiffResult& d = r.diff;
  d.path_a = d.path_b = evil;
  for (int i = 0; i < kDiffSectionCount; ++i) d.sections.push_back({static_cast<DiffSection>(i), i != 6, evil, false});
  d.format = {{evil, evil, evil}};
  d.records = {{evil, ChangeKind::kChanged, {{"size", "5", "6"}, {evil, evil, evil}}, "", true}};
  d.modules = {{evil, evil, ChangeKind::kChanged, {{evil, evil, evil}}}};
  d.parameters = {{evil, evil, ChangeKind::kChanged, evil, evil, {2}, {2}, true, {2, 1, 0.5, 1, true}, evil}};
  const std::string hunk = "@@ -1,2 +1,2 @@\n " + evil + "\n-" + evil + "\n+" + evil + "x\n";
  d.code = {{"chains", "(" + evil + ")", ChangeKind::kChanged, hunk, ""}};
  d.operators_added = d.operators_removed = {evil};
  d.warnings = {evil};
  const std::string html = RenderReportDiffHtml(r);
  RequireDiffSections(html);
  for (const char* raw : {"<script>alert", "<img", "onerror=y>", "\x1b", "\xff"}) {
    CHECK(html.find(raw) == std::string::npos);
  }
  CHECK(Count(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=y&gt;") >= 20);
  CHECK(Has(html, "Not compared: &lt;script&gt;"));
}
