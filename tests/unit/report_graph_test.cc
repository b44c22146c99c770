// The report's graph section (commands/report_graph.cc, render/
// report_html_graph.cc): folding by module and into parts, dot's layout read
// back, the drawing, the text list when dot is missing or runs too long, and
// the graphs of a .pt2 and an ExecuTorch program.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <set>
#include <string>

#include "../../lib/src/commands/run_program.h"
#include "../../lib/src/render/report_html.h"
#include "report_checks.h"
#include "test_util.h"
#include "tsctl/pt2.h"
#include "tsctl/report.h"
#include "tsctl/report_graph.h"

using namespace tsctl;
using tsctl::test::Count;

namespace {

// `modules` modules of `each` nodes, a chain through all of them, with an
// input before and an output after.
ReportGraph Chain(int modules, int each) {
  ReportGraph g{"forward", {}};
  g.nodes.push_back({"input x", "", "input", {}});
  for (int m = 0; m < modules; ++m) {
    for (int i = 0; i < each; ++i) {
      const uint32_t prev = static_cast<uint32_t>(g.nodes.size() - 1);
      g.nodes.push_back({"aten::op" + std::to_string(i), "blocks." + std::to_string(m) + ".mlp", "op", {prev}});
    }
  }
  g.nodes.push_back({"output", "", "output", {static_cast<uint32_t>(g.nodes.size() - 1)}});
  return g;
}

void RequireInside(const GraphView& v) {
  for (const GraphBox& b : v.boxes) {
    CHECK(b.x - b.w / 2 >= 0);
    CHECK(b.y - b.h / 2 >= 0);
    CHECK(b.x + b.w / 2 <= v.width + 0.5);
    CHECK(b.y + b.h / 2 <= v.height + 0.5);
  }
}

uint64_t NodesIn(const ReportGraphs& gs, int view) {
  uint64_t n = 0;
  for (const GraphBox& b : gs.views[static_cast<size_t>(view)].boxes) n += b.kind == "fold" ? b.count : 1;
  return n;
}

}  // namespace

TEST_CASE("report graph: folded by module, laid out by dot", "[report][graph]") {
  ReportGraphs gs;
  gs.graphs.push_back(Chain(3, 40));  // top: input, blocks (folded), output
  LayoutReportGraphs(gs);
  REQUIRE_FALSE(gs.views.empty());
  INFO(gs.note);
  const GraphView& top = gs.views[0];
  CHECK(top.title == "(top)");
  CHECK(top.parent == -1);
  REQUIRE(top.boxes.size() == 3);  // input, "blocks", output
  CHECK(top.boxes[1].kind == "fold");
  CHECK(top.boxes[1].label == "blocks");
  CHECK(top.boxes[1].count == 120);
  CHECK(top.lines.size() == 2);  // input -> blocks -> output
  CHECK(NodesIn(gs, 0) == 122);
  // Every fold opens a view whose parent is the view holding it, with as many nodes.
  for (size_t v = 0; v < gs.views.size(); ++v) {
    RequireInside(gs.views[v]);
    CHECK(gs.views[v].boxes.size() <= 120);
    for (const GraphBox& b : gs.views[v].boxes) {
      if (b.kind != "fold") continue;
      REQUIRE(b.unfold > static_cast<int>(v));
      CHECK(gs.views[static_cast<size_t>(b.unfold)].parent == static_cast<int>(v));
      CHECK(NodesIn(gs, b.unfold) == b.count);
    }
  }
  // blocks -> blocks.0 .. 2, each with a single child module mlp: shown as blocks.K.mlp.
  const GraphView& blocks = gs.views[static_cast<size_t>(top.boxes[1].unfold)];
  REQUIRE(blocks.boxes.size() == 3);
  CHECK(blocks.boxes[0].label == "blocks.0.mlp");
  CHECK(blocks.lines.size() == 2);
  // Every edge is a spline of 1 + 3k points.
  for (const auto& line : blocks.lines) CHECK((line.size() / 2) % 3 == 1);
}

TEST_CASE("report graph: a long method without modules is cut into parts", "[report][graph]") {
  ReportGraphs gs;
  ReportGraph g = Chain(1, 1000);
  for (ReportGraphNode& n : g.nodes) n.module = "";
  gs.graphs.push_back(g);
  LayoutReportGraphs(gs, {.max_view_nodes = 100});
  REQUIRE_FALSE(gs.views.empty());
  CHECK(gs.views[0].boxes.size() <= 100);
  CHECK(NodesIn(gs, 0) == 1002);
  CHECK(gs.views[0].boxes[0].label.rfind("part 1 of ", 0) == 0);
  for (const GraphView& v : gs.views) CHECK(v.boxes.size() <= 100);
  const std::string page = report::GraphSection(gs);
  CHECK(Count(page, "<details open id=\"gv0\">") == 1);
  CHECK(Count(page, "<a href=\"#gv") >= gs.views.size() - 1);  // each fold links to its view
}

TEST_CASE("report graph: without dot, or past its time, the nodes are listed", "[report][graph]") {
  ReportGraphs gs;
  gs.graphs.push_back(Chain(2, 3));
  LayoutReportGraphs(gs, {.dot = "/nonexistent/dot"});
  CHECK(gs.views.empty());
  CHECK(gs.note.find("Graphviz's dot is not installed") != std::string::npos);
  const std::string page = report::GraphSection(gs);
  CHECK(page.find("<pre>0: input x\n1: aten::op0  [blocks.0.mlp]  &lt;- 0\n") != std::string::npos);

  const ProgramRun slow = RunProgram({"sleep", "5"}, "", 0.2);
  CHECK(slow.timed_out);
  const ProgramRun cat = RunProgram({"cat"}, "some input", 5);
  CHECK(cat.exit_code == 0);
  CHECK(cat.out == "some input");
  ReportGraphs big;
  big.graphs.push_back(Chain(1, 20));
  LayoutReportGraphs(big, {.max_nodes = 10});
  CHECK(big.views.empty());
  CHECK(big.note.find("22 nodes, more than the 10") != std::string::npos);
}

TEST_CASE("report graph: labels and titles are escaped", "[report][graph]") {
  ReportGraphs gs;
  ReportGraph g{"<script>m</script>", {}};
  g.nodes.push_back({"<img src=x onerror=alert(1)>", "", "input", {}});
  g.nodes.push_back({"a\"b", "<b>mod", "op", {0}});
  g.nodes.push_back({"c", "<b>mod", "op", {1}});
  gs.graphs.push_back(g);
  LayoutReportGraphs(gs);
  REQUIRE_FALSE(gs.views.empty());
  const std::string page = report::GraphSection(gs);
  CHECK(page.find("<img") == std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("<b>") == std::string::npos);
  CHECK(page.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(page.find("<code>&lt;b&gt;mod</code>") != std::string::npos);
}

TEST_CASE("report graph: a .pt2 program by module, an ExecuTorch program's calls", "[report][graph]") {
  Archive a = Archive::OpenModel(OpenFileSource(test::TestData("pt2/transformer.pt2")));
  ReportGraphs gs = Pt2ReportGraphs(a);
  REQUIRE(gs.graphs.size() == 1);
  const ReportGraph& g = gs.graphs[0];
  CHECK(g.nodes.size() == 49);
  std::set<std::string> modules;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    modules.insert(g.nodes[i].module);
    for (uint32_t f : g.nodes[i].from) CHECK(f < i);
  }
  CHECK(modules.count("self_attn") == 1);
  CHECK(g.nodes.front().kind == "input");
  CHECK(g.nodes.back().kind == "output");
  CHECK_FALSE(g.nodes.back().from.empty());

  const ReportContents r = BuildReport(a);
  REQUIRE_FALSE(r.graphs.views.empty());
  const std::string page = RenderReportHtml(r);
  CHECK(Count(page, "<section id=\"graph\">") == 1);
  CHECK(page.find("<code>self_attn</code>") != std::string::npos);
  test::RequireOfflineFrame(page);

  // A TorchScript page, written without LibTorch, says where its graph is.
  const ReportContents ts = BuildReport(Archive::Open(OpenFileSource(test::TestData("traced_cnn.pt"))));
  CHECK(ts.graphs.graphs.empty());
  CHECK(ts.graphs.note.find("tsctl graph") != std::string::npos);
}

TEST_CASE("report graph: an ExecuTorch program's calls and delegates", "[report][graph][pte]") {
  const std::string f = test::TestData("pte/linear_xnnpack.pte");
  const PteFile pte = ReadPte(f, {.chains = true});
  ReportGraphs gs = PteReportGraphs(pte);
  REQUIRE(gs.graphs.size() == pte.program.methods.size());
  size_t delegates = 0;
  for (const ReportGraphNode& n : gs.graphs[0].nodes) delegates += n.kind == "delegate";
  CHECK(delegates == 1);  // the XNNPACK delegate
  LayoutReportGraphs(gs);
  REQUIRE_FALSE(gs.views.empty());
  const std::string page = RenderReportHtml(pte, f, gs);
  CHECK(page.find("XnnpackBackend</text>") != std::string::npos);
  test::RequireOfflineFrame(page);
}
