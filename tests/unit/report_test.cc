// tsctl report's page (lib/src/render/report_html*.cc): every section, every
// field escaped, the charts' parts, the module tree from dotted names, the
// code colouring; a TorchScript archive and ExecuTorch files built in memory.
#include <catch2/catch.hpp>

#include <string>

#include "../../lib/src/render/report_html.h"
#include "report_checks.h"
#include "test_util.h"
#include "tsctl/pte.h"
#include "tsctl/report.h"

using namespace tsctl;
using tsctl::test::Count;

namespace {

void RequireSections(const std::string& page) {
  for (const char* id : {"overview", "summary", "signature", "modules", "operators", "sizes", "code", "extra"}) {
    CHECK(Count(page, std::string("<section id=\"") + id + "\"") == 1);
  }
  test::RequireOfflineFrame(page);
}

}  // namespace

TEST_CASE("report: a TorchScript archive's page", "[report]") {
  Archive a = Archive::Open(OpenFileSource(test::TestData("traced_cnn.pt")));
  const ReportContents r = BuildReport(a);
  REQUIRE(r.code.size() == r.info.code.size());
  CHECK(r.code[0].record == "code/__torch__.py");
  CHECK(r.code[0].text.find("class SmallCNN(Module):") != std::string::npos);
  const std::string page = RenderReportHtml(r);
  RequireSections(page);
  CHECK(page.find("330 params, 1.36 KiB, 6 submodules") != std::string::npos);  // the root's subtree
  CHECK(page.find("<code>forward(self, x: Tensor) -&gt; Tensor</code>") != std::string::npos);
  CHECK(page.find("<span class=\"k\">def</span> forward") != std::string::npos);
  CHECK(Count(page, "<rect class=\"bar\"") == 6);  // six operators, one call each
}

TEST_CASE("report: a legacy (model.json) archive's methods are its code record's top-level defs", "[report]") {
  // PyTorch 1.0's layout: no classes; the root's torchscriptArena names the
  // record whose defs are its methods. The Signature said "No methods found"
  // beside a Code section showing forward.
  const std::string model_json =
      R"({"protoVersion":"3","mainModule":{"torchscriptArena":{"key":"code/foo.py"},"name":"foo","optimize":true},)"
      R"("producerName":"pytorch","producerVersion":"1.0"})";
  const std::string code = "op_version_set = 0\ndef forward(self,\n    x: Tensor,\n    y: Tensor) -> Tensor:\n"
                           "  return torch.add(x, y, alpha=1)\ndef helper(self) -> int:\n  return 1\n";
  const std::string zip = test::MakeZip({test::Stored("foo/version", "1\n"), test::Stored("foo/code/foo.py", code),
                                         test::Stored("foo/model.json", model_json)});
  Archive a = Archive::Open(MakeMemorySource(zip, "foo.pt"));
  const ReportContents r = BuildReport(a);
  REQUIRE(r.info.module);
  CHECK(r.info.module->code_record == "code/foo.py");
  const std::string page = RenderReportHtml(r);
  CHECK(page.find("No methods found") == std::string::npos);
  CHECK(page.find("<code>forward(self, x: Tensor, y: Tensor) -&gt; Tensor</code>") != std::string::npos);
  CHECK(page.find("<code>helper(self) -&gt; int</code>") != std::string::npos);
}

TEST_CASE("report: a legacy (model.json) archive's tensors by caffe2's dataType names", "[report][dtype]") {
  const std::string model_json =
      R"({"protoVersion":"3","mainModule":{"name":"m","parameters":[{"isBuffer":false,"tensorId":"0","name":"w"},)"
      R"({"isBuffer":true,"tensorId":"1","name":"n"},{"isBuffer":true,"tensorId":"2","name":"odd"}]},)"
      R"("tensors":[{"dims":["2","3"],"offset":"0","strides":["3","1"],"dataType":"FLOAT16","data":{"key":"tensors/0"}},)"
      R"({"dims":["4"],"offset":"0","strides":["1"],"dataType":"INT64","data":{"key":"tensors/1"}},)"
      R"({"dims":["4"],"offset":"0","strides":["1"],"dataType":"STRING","data":{"key":"tensors/2"}}],)"
      R"("producerName":"pytorch","producerVersion":"1.0"})";
  const std::string zip = test::MakeZip({test::Stored("m/version", "1\n"), test::Stored("m/model.json", model_json),
                                         test::Stored("m/tensors/0", std::string(12, '\0')),
                                         test::Stored("m/tensors/1", std::string(32, '\0'))});
  Archive a = Archive::Open(MakeMemorySource(zip, "m.pt"));
  const ReportContents r = BuildReport(a);
  REQUIRE(r.info.module);
  REQUIRE(r.info.module->tensors.size() == 3);
  CHECK(r.info.module->tensors[0].dtype == "float16");
  CHECK(r.info.module->tensors[0].bytes == 12);
  CHECK(r.info.module->tensors[1].dtype == "int64");
  CHECK(r.info.module->tensors[1].bytes == 32);
  CHECK(r.info.module->tensors[2].dtype == "STRING");  // a name tsctl does not know is shown as written, 0 bytes
  CHECK(r.info.module->tensors[2].bytes == 0);
}

TEST_CASE("report: weights inside packed operator contexts are counted, not '0 elements'", "[report]") {
  Archive a = Archive::Open(OpenFileSource(test::TestData("infer/xnnpack_conv6.ptl")));
  const ReportContents r = BuildReport(a);
  uint64_t packed = 0;
  for (const TensorInfo& t : r.info.constants) packed += t.numel;
  CHECK(packed == 8 * 6 * 3 * 3 + 8 + 5 * 8 + 5);  // Conv2dOpContext's and LinearOpContext's weights and biases
  const std::string page = RenderReportHtml(r);
  CHECK(page.find("0 elements, and 485 in constants") != std::string::npos);
}

TEST_CASE("report: a code budget leaves records out, named", "[report]") {
  Archive a = Archive::Open(OpenFileSource(test::TestData("traced_cnn.pt")));
  ReportOptions options;
  options.max_code_record = 100;
  options.max_code_total = 150;
  const ReportContents r = BuildReport(a, options);
  CHECK(r.code[0].truncated);
  CHECK(r.code[0].text.size() == 100);
  CHECK(r.code[1].text.size() == 50);
  CHECK(r.code.back().omitted);
  CHECK(RenderReportHtml(r).find("not shown: the page&#39;s code budget is spent") != std::string::npos);
}

TEST_CASE("report: every field of a page is escaped", "[report]") {
  const std::string evil = "<script>alert('x')</script>\"><img src=x onerror=y>\x1b[31m\xff";
  report::Page page;
  page.path = evil;
  page.summary = {{evil, evil}};
  page.producer = {{evil, evil}};
  page.warnings = {evil};
  page.methods = {{evil, evil, {{evil, evil, evil, evil}}, {{evil, evil, evil, evil}}, evil}};
  page.signature_note = page.modules_note = page.operators_note = page.sizes_note = evil;
  report::Module m;
  m.name = m.type = evil;
  m.tensors = {{evil, "parameter", evil, evil, 4, 16}};
  m.children = {m};
  page.modules = {m};
  page.operators = {{evil, 3}, {"aten::add", 1}};
  page.sizes = {{evil, evil, 100}, {"code", evil, 50}};
  page.code = {{evil, 10, evil + "\n" + evil, evil, evil}};
  page.extra = {{evil, 10, evil, evil, evil}};
  page.code_note = page.extra_note = evil;
  const std::string html = report::RenderPage(page);
  RequireSections(html);
  for (const char* raw : {"<script>alert", "<img", "onerror=y>", "\x1b", "\xff"}) {
    CHECK(html.find(raw) == std::string::npos);
  }
  CHECK(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=y&gt;") !=
        std::string::npos);
}

TEST_CASE("report: code colouring escapes between its spans", "[report]") {
  const std::string html = report::ColourCode("def f(x):  # <b>\n  return '<i>' + 10 + in_\xff\n");
  CHECK(html ==
        "<span class=\"k\">def</span> f(x):  <span class=\"cm\"># &lt;b&gt;</span>\n  <span class=\"k\">return</span> "
        "<span class=\"s\">&#39;&lt;i&gt;&#39;</span> + <span class=\"nu\">10</span> + in_\\xff\n");
  CHECK(report::ColourCode("s = \"\"\"a\n<b>\"\"\" x") ==
        "s = <span class=\"s\">&quot;&quot;&quot;a\n&lt;b&gt;&quot;&quot;&quot;</span> x");
}

TEST_CASE("report: a module tree from dotted names, summed", "[report]") {
  std::vector<report::Module> roots = report::ModulesFromNames(
      {{"a.b.w", "parameter", "", "", 6, 24}, {"a.c", "buffer", "", "", 2, 8}, {"x", "parameter", "", "", 1, 4}});
  report::SumModules(roots);
  REQUIRE(roots.size() == 1);
  const report::Module& root = roots[0];
  CHECK(root.tensors.size() == 1);
  CHECK(root.tensors[0].name == "x");
  REQUIRE(root.children.size() == 1);
  CHECK(root.children[0].name == "a");
  CHECK(root.children[0].tensors[0].name == "c");
  CHECK(root.children[0].children[0].tensors[0].name == "w");
  CHECK(root.params == 7);
  CHECK(root.bytes == 36);
  CHECK(root.count == 3);
  CHECK(root.children[0].params == 6);
}

TEST_CASE("report: deep trees are listed flat below the depth the page nests", "[report]") {
  report::Module m;
  report::Module* at = &m;
  for (int i = 0; i < 60; ++i) {
    at->children.push_back({});
    at = &at->children.back();
    at->name = "m" + std::to_string(i);
  }
  std::vector<report::Module> roots = {m};
  report::CapDepth(roots, 3);
  const report::Module& third = roots[0].children[0].children[0].children[0];
  CHECK(third.name == "m2");
  REQUIRE(third.children.size() == 57);
  CHECK(third.children[0].name == "m2.m3");
  CHECK(third.children[56].children.empty());
}

TEST_CASE("report: the treemap draws each part, the rest of a big group as one", "[report]") {
  std::vector<report::Block> blocks;
  for (int i = 0; i < 50; ++i) blocks.push_back({"tensors", "t" + std::to_string(i), 100});
  blocks.push_back({"code", "code/x.py", 1000});
  blocks.push_back({"empty", "nothing", 0});
  const std::string svg = report::TreemapSvg(blocks);
  CHECK(Count(svg, "<rect class=\"leaf") == 40 + 1);  // 39 tensors and "11 others", code
  CHECK(svg.find("11 others") != std::string::npos);
  CHECK(Count(svg, "<rect class=\"frame\"") == 2);
}

TEST_CASE("report: an ExecuTorch program's page", "[report]") {
  PteFile f;
  f.identifier = "ET12";
  f.file_size = 1000;
  PteMethod m;
  m.name = "forward<b>";
  PteValue in;
  in.kind = PteValueKind::kTensor;
  in.tensor.dtype = "Float";
  in.tensor.sizes = {1, 3};
  m.inputs = {in};
  m.operators = {{"aten::add", "out", 3}, {"<svg onload=x>", "", 1}};
  m.delegates = {{"XnnpackBackend", false, 0, 400, {}, 1}};
  // Its chain, as read with PteReadOptions::chains: the code section shows it.
  m.value_table = {in};
  m.input_values = {0};
  m.chain_list = {PteChain{{}, {}, {PteInstruction{PteInstructionKind::kKernelCall, 1, {0}}}}};
  f.program.methods = {m};
  PteStoredTensor t;
  t.method = "forward";
  t.tensor.fqn = "lin.weight";
  t.tensor.sizes = {2, 2};
  t.tensor.nbytes = 16;
  t.tensor.location = PteDataLocation::kSegment;
  f.program.tensors = {t};
  f.sizes = {{PteSizeKind::kHeader, "", false, 40}, {PteSizeKind::kDelegate, "XnnpackBackend", false, 400},
             {PteSizeKind::kFlatbuffer, "", false, 560}};
  const std::string page = RenderReportHtml(f, "model.pte");
  RequireSections(page);
  CHECK(page.find("<code>forward&lt;b&gt;</code>") != std::string::npos);
  CHECK(page.find("aten::add.out") != std::string::npos);
  CHECK(page.find("&lt;svg onload=x&gt;") != std::string::npos);
  CHECK(page.find("<svg onload") == std::string::npos);
  CHECK(page.find("Delegated: 1 call(s) to XnnpackBackend.") != std::string::npos);
  CHECK(page.find(">lin</span>") != std::string::npos);  // the module of lin.weight
  CHECK(Count(page, "<rect class=\"leaf") == 3);
  // The chain, escaped (numbers coloured in spans).
  const size_t chain = page.find("method forward&lt;b&gt;, chain ");
  REQUIRE(chain != std::string::npos);
  CHECK(page.find("&lt;svg onload=x&gt; ", chain) != std::string::npos);
}

TEST_CASE("report: a .pte's external tensors are listed, not counted in its bytes", "[report][pte]") {
  // Weights in a .ptd: the Modules section counted their 60 B where the
  // size breakdown (this file's bytes) has none.
  const std::string f = test::TestData("pte/linear_external.pte");
  const std::string page = RenderReportHtml(ReadPte(f), f);
  CHECK(page.find("2 external tensor(s), 60 B, are another file&#39;s bytes") != std::string::npos);
  CHECK(page.find("0 params, 0 B, 1 submodules") != std::string::npos);
  CHECK(page.find("<td>external</td>") != std::string::npos);
  // In-file constants count as before.
  const std::string g = test::TestData("pte/linear.pte");
  CHECK(RenderReportHtml(ReadPte(g), g).find("0 params, 64 B") != std::string::npos);
}
