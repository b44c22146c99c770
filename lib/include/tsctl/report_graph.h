// The graph section of tsctl report: each method's dataflow graph, folded by
// module and laid out by Graphviz (dot -Tplain), drawn by tsctl as inline SVG.
// Only sizes reach dot, never a string from the archive: every node is an
// empty box of the width its label needs, so nothing dot might misread or
// pass through reaches the page; tsctl draws the labels itself, escaped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/pte.h"

namespace tsctl {

// A node of a method's graph, in program order.
struct ReportGraphNode {
  std::string label;           // "aten::conv2d", "input x", "XnnpackBackend"
  std::string module;          // dotted path of the module it runs in ("" for the top)
  std::string kind;            // "input", "output", "op", "delegate"
  std::vector<uint32_t> from;  // earlier nodes whose values it takes
};

struct ReportGraph {
  std::string name;  // "forward", a .pt2 model, a .pte method
  std::vector<ReportGraphNode> nodes;
};

// One drawn picture: the nodes of one module (or one part of a module too
// large to draw at once), each of its child modules (or parts) a folded box.
struct GraphBox {
  double x = 0, y = 0, w = 0, h = 0;  // centre and size, in px
  std::string label;
  std::string module;      // a node shown in place of its one-node module: that module ("" otherwise)
  std::string kind;        // as ReportGraphNode::kind, or "fold"
  int unfold = -1;         // a folded box: the view that shows its inside
  uint64_t count = 1;      // a folded box: the nodes inside it
};

struct GraphView {
  size_t graph = 0;        // index in ReportGraphs::graphs
  std::string title;       // "(top)", "layer1.0", "layer1.0, part 2 of 3"
  int parent = -1;         // the view with this one's folded box
  double width = 0, height = 0;
  std::vector<GraphBox> boxes;
  std::vector<std::vector<double>> lines;  // edges: x0 y0 x1 y1 ... (cubic B-spline points, px)
};

struct ReportGraphs {
  std::vector<ReportGraph> graphs;  // as read from the file
  std::vector<GraphView> views;     // laid out; empty when not drawn
  std::string note;                 // where the graphs come from, why one is not drawn
};

struct GraphLayoutOptions {
  size_t max_view_nodes = 120;       // boxes in one picture; a module with more is cut into parts
  size_t max_nodes = 50000;          // nodes over all graphs drawn; more: listed as text only
  double timeout_seconds = 30;       // for Graphviz
  std::string dot = "dot";           // the program (PATH is searched)
};

// Folds every graph by module into views of at most max_view_nodes boxes
// and lays them out with one run of `dot -Tplain`. When dot is missing,
// fails, or runs past its time, the views stay empty and `note` says why
// (the page then lists the nodes as text).
void LayoutReportGraphs(ReportGraphs& graphs, const GraphLayoutOptions& options = {});

// The graphs of an ExecuTorch program: each method's calls (kernels,
// delegates) as ChainDot links them; no modules: long methods are cut into parts.
ReportGraphs PteReportGraphs(const PteFile& file);

// The graph of a TorchScript archive's `method` as LibTorch inlines it,
// read in the sandboxed LibTorch child (GraphOptions::Format::kNodes) within
// `timeout_seconds`: each node in the module of its inlined call stack.
// Throws what Graph throws (kUnavailable in a build without LibTorch,
// kRefused for an archive that fails validate's static checks;
// `allow_load_hooks` lets one through whose only finding is ts.hooks).
ReportGraphs TorchScriptReportGraphs(const std::string& path, const std::string& method = "forward",
                                     double timeout_seconds = 120, bool allow_load_hooks = false);

// The graphs of a .pt2's exported programs, each node in the module of its
// nn_module_stack. An AOTInductor package without a program gives none.
ReportGraphs Pt2ReportGraphs(const Archive& archive);

}  // namespace tsctl
