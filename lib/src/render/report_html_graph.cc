// The report's graph section: each method's graph in the views that
// LayoutReportGraphs folded and laid out, drawn as inline SVG (boxes, edges
// as the splines dot chose, an arrowhead at each end); a folded module is a
// box linking to its own view. Without a layout (no Graphviz, too large) the
// nodes are listed as text. Labels are escaped here, and nowhere else.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report_html.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"

namespace tsctl::report {
namespace {

constexpr size_t kLabelChars = 28;     // as report_graph.cc sizes the boxes
constexpr size_t kMaxTextNodes = 5000;  // listed per graph without a layout


std::string ViewId(size_t v) { return "gv" + std::to_string(v); }

std::string KindClass(const std::string& kind) {
  if (kind == "input" || kind == "output") return "gn gi";
  if (kind == "delegate") return "gn gd";
  if (kind == "fold") return "gn gf";
  return "gn";
}

// An edge: dot's cubic B-spline (1 + 3k points), and an arrowhead in the
// direction of its last segment.
std::string Edge(const std::vector<double>& p) {
  if (p.size() < 4) return "";
  std::string d = "M" + OneDecimal(p[0]) + " " + OneDecimal(p[1]);
  for (size_t i = 2; i + 6 <= p.size(); i += 6) {
    d += " C" + OneDecimal(p[i]) + " " + OneDecimal(p[i + 1]) + " " + OneDecimal(p[i + 2]) + " " + OneDecimal(p[i + 3]) + " " + OneDecimal(p[i + 4]) +
         " " + OneDecimal(p[i + 5]);
  }
  const double x = p[p.size() - 2], y = p[p.size() - 1];
  double dx = x - p[p.size() - 4], dy = y - p[p.size() - 3];
  const double len = std::hypot(dx, dy);
  if (len < 1e-6) return "<path class=\"ge\" d=\"" + d + "\"></path>";
  dx /= len;
  dy /= len;
  const double tx = x + dx * 7, ty = y + dy * 7;  // the tip, at the box
  const std::string head = OneDecimal(tx) + "," + OneDecimal(ty) + " " + OneDecimal(x - dy * 3.5) + "," + OneDecimal(y + dx * 3.5) + " " +
                           OneDecimal(x + dy * 3.5) + "," + OneDecimal(y - dx * 3.5);
  return "<path class=\"ge\" d=\"" + d + "\"></path><polygon class=\"ga\" points=\"" + head + "\"></polygon>";
}

std::string Box(const GraphBox& b) {
  const double x = b.x - b.w / 2, y = b.y - b.h / 2;
  std::string g = "<g class=\"" + KindClass(b.kind) + "\"><title>" + E(b.label) +
                  (b.kind == "fold" ? " (" + Grouped(b.count) + " nodes)" : "") +
                  (b.module.empty() ? "" : " in " + E(b.module)) + "</title><rect x=\"" + OneDecimal(x) +
                  "\" y=\"" + OneDecimal(y) + "\" width=\"" + OneDecimal(b.w) + "\" height=\"" + OneDecimal(b.h) + "\" rx=\"3\"></rect>";
  if (b.kind == "fold") {
    g += "<text x=\"" + OneDecimal(b.x) + "\" y=\"" + OneDecimal(b.y - 2) + "\" text-anchor=\"middle\">" +
         E(Ellipsis(b.label, kLabelChars)) + "</text><text class=\"gc\" x=\"" + OneDecimal(b.x) + "\" y=\"" +
         OneDecimal(b.y + 11) + "\" text-anchor=\"middle\">" + Grouped(b.count) + " nodes</text></g>";
    return b.unfold >= 0 ? "<a href=\"#" + ViewId(static_cast<size_t>(b.unfold)) + "\">" + g + "</a>" : g;
  }
  return g + "<text x=\"" + OneDecimal(b.x) + "\" y=\"" + OneDecimal(b.y + 4) + "\" text-anchor=\"middle\">" +
         E(Ellipsis(b.label, kLabelChars)) + "</text></g>";
}

std::string View(const GraphView& view, size_t id, const std::string& graph) {
  std::string out = std::string(view.parent < 0 ? "<details open" : "<details") + " id=\"" + ViewId(id) +
                    "\"><summary><code>" + E(view.title) + "</code> <span class=\"muted\">" +
                    Grouped(view.boxes.size()) + (view.boxes.size() == 1 ? " box" : " boxes") + "</span></summary>";
  if (view.parent >= 0) {
    out += "<p class=\"note\">Inside a box of <a href=\"#" + ViewId(static_cast<size_t>(view.parent)) + "\">the view above</a>.</p>";
  }
  out += "<div class=\"gw\"><svg class=\"graph\" viewBox=\"0 0 " + OneDecimal(view.width) + " " + OneDecimal(view.height) +
         "\" width=\"" + OneDecimal(view.width) + "\" height=\"" + OneDecimal(view.height) + "\" role=\"img\" aria-label=\"" +
         E("Graph of " + graph + ": " + view.title) + "\">";
  for (const std::vector<double>& line : view.lines) out += Edge(line);
  for (const GraphBox& b : view.boxes) out += Box(b);
  return out + "</svg></div></details>";
}

// Without a layout: the nodes in order, each with its module and inputs.
std::string TextList(const ReportGraph& g) {
  std::string out = "<pre>";
  for (size_t i = 0; i < g.nodes.size() && i < kMaxTextNodes; ++i) {
    const ReportGraphNode& n = g.nodes[i];
    std::string line = std::to_string(i) + ": " + n.label;
    if (!n.module.empty()) line += "  [" + n.module + "]";
    if (!n.from.empty()) {
      line += "  <-";
      for (uint32_t f : n.from) line += " " + std::to_string(f);
    }
    out += E(line) + "\n";  // each line escaped: the escaper writes a newline as \x0a
  }
  out += "</pre>";
  if (g.nodes.size() > kMaxTextNodes) out += More(g.nodes.size() - kMaxTextNodes, "nodes", "tsctl graph");
  return out;
}

}  // namespace

std::string GraphSection(const ReportGraphs& graphs) {
  std::string out = "<section id=\"graph\"><h2>Graph</h2>";
  if (!graphs.note.empty()) out += "<p class=\"note\">" + E(graphs.note) + "</p>";
  if (graphs.graphs.empty()) return out + "<p class=\"muted\">No graph.</p></section>";
  for (size_t i = 0; i < graphs.graphs.size(); ++i) {
    const ReportGraph& g = graphs.graphs[i];
    out += std::string(i < 2 ? "<details open>" : "<details>") + "<summary><code>" + E(g.name) +
           "</code> <span class=\"muted\">" + Grouped(g.nodes.size()) + (g.nodes.size() == 1 ? " node" : " nodes") + "</span></summary>";
    bool drawn = false;
    for (size_t v = 0; v < graphs.views.size(); ++v) {
      if (graphs.views[v].graph != i) continue;
      out += View(graphs.views[v], v, g.name);
      drawn = true;
    }
    if (!drawn) out += TextList(g);
    out += "</details>";
  }
  return out + "</section>";
}

}  // namespace tsctl::report
