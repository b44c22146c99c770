// The report's graph section, gathered and laid out (tsctl/report_graph.h):
// a .pt2 program's nodes by module, each graph folded by module into views
// of a bounded size, and one run of Graphviz's dot for every view's layout.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "run_program.h"
#include "tsctl/error.h"
#include "tsctl/pt2.h"
#include "tsctl/report_graph.h"
#include "tsctl/torch_backend.h"

namespace tsctl {
namespace {

// A module of one graph: its direct nodes and child modules, in program order.
struct Group {
  std::string path;
  std::vector<uint32_t> nodes;   // direct members
  std::vector<size_t> children;  // indices in the group list
  uint64_t total = 0;            // nodes in the subtree
  uint32_t first = 0;            // its first node
};

std::vector<Group> Groups(const ReportGraph& g) {
  std::vector<Group> groups(1);  // [0]: the top
  std::map<std::string, size_t> index{{"", 0}};
  auto group_of = [&](const std::string& path, uint32_t at, auto& self) -> size_t {
    if (auto it = index.find(path); it != index.end()) return it->second;
    const size_t dot = path.rfind('.');
    const size_t parent = self(dot == std::string::npos ? std::string() : path.substr(0, dot), at, self);
    groups.push_back({path, {}, {}, 0, at});
    index.emplace(path, groups.size() - 1);
    groups[parent].children.push_back(groups.size() - 1);
    return groups.size() - 1;
  };
  for (uint32_t i = 0; i < g.nodes.size(); ++i) groups[group_of(g.nodes[i].module, i, group_of)].nodes.push_back(i);
  for (size_t i = groups.size(); i-- > 0;) {  // children come after their parents
    groups[i].total += groups[i].nodes.size();
    for (size_t c : groups[i].children) groups[i].total += groups[c].total;
  }
  return groups;
}

// What a view shows: a node, or a folded box standing for `nodes`.
struct Member {
  int64_t node = -1;            // a node, or -1 for a fold
  std::string label;
  std::string module;           // a node standing for its one-node module: that module
  std::vector<uint32_t> nodes;  // a fold: every node inside it
  int group = -1;               // a fold of a module: the group to unfold
  std::vector<Member> parts;    // a fold of a part: its members
};

class Folder {
 public:
  Folder(const ReportGraph& g, size_t graph, size_t max, std::vector<GraphView>& views)
      : g_(g), graph_(graph), max_(std::max<size_t>(max, 2)), views_(views), groups_(Groups(g)), owner_(g.nodes.size(), -1) {}

  void Run() { GroupView(0, -1); }

 private:
  // A group's members: its nodes and its child modules (a module of one
  // node shows that node; a module with only one child module, that child).
  std::vector<Member> MembersOf(size_t gi) {
    std::vector<std::pair<uint32_t, Member>> ordered;
    for (uint32_t n : groups_[gi].nodes) ordered.push_back({n, Member{n, g_.nodes[n].label, "", {}, -1, {}}});
    for (size_t c : groups_[gi].children) {
      while (groups_[c].nodes.empty() && groups_[c].children.size() == 1) c = groups_[c].children[0];
      Member m{-1, groups_[c].path, "", {}, static_cast<int>(c), {}};
      Collect(c, m.nodes);
      if (m.nodes.size() == 1) m = Member{m.nodes[0], g_.nodes[m.nodes[0]].label, groups_[c].path, {}, -1, {}};
      ordered.push_back({groups_[c].first, std::move(m)});
    }
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Member> out;
    for (auto& [at, m] : ordered) out.push_back(std::move(m));
    return out;
  }

  void Collect(size_t gi, std::vector<uint32_t>& out) const {
    out.insert(out.end(), groups_[gi].nodes.begin(), groups_[gi].nodes.end());
    for (size_t c : groups_[gi].children) Collect(c, out);
  }

  int GroupView(size_t gi, int parent) {
    return View(MembersOf(gi), groups_[gi].path.empty() ? "(top)" : groups_[gi].path, parent);
  }

  // Cuts members into parts until one view holds them all.
  static std::vector<Member> Parts(std::vector<Member> members, size_t max) {
    while (members.size() > max) {
      const size_t count = (members.size() + max - 1) / max, each = (members.size() + count - 1) / count;
      std::vector<Member> parts;
      for (size_t at = 0; at < members.size(); at += each) {
        Member p{-1, "", "", {}, -1, {}};
        for (size_t i = at; i < std::min(members.size(), at + each); ++i) {
          if (members[i].node >= 0) p.nodes.push_back(static_cast<uint32_t>(members[i].node));
          p.nodes.insert(p.nodes.end(), members[i].nodes.begin(), members[i].nodes.end());
          p.parts.push_back(std::move(members[i]));
        }
        parts.push_back(std::move(p));
      }
      for (size_t i = 0; i < parts.size(); ++i) {
        parts[i].label = "part " + std::to_string(i + 1) + " of " + std::to_string(parts.size());
      }
      members = std::move(parts);
    }
    return members;
  }

  int View(std::vector<Member> members, const std::string& title, int parent) {
    members = Parts(std::move(members), max_);
    const int id = static_cast<int>(views_.size());
    views_.push_back({graph_, title, parent, 0, 0, {}, {}});
    std::vector<GraphBox> boxes;
    for (size_t i = 0; i < members.size(); ++i) {
      const Member& m = members[i];
      if (m.node >= 0) {
        owner_[static_cast<size_t>(m.node)] = static_cast<int>(i);
        boxes.push_back({0, 0, 0, 0, m.label, m.module, g_.nodes[static_cast<size_t>(m.node)].kind, -1, 1});
      } else {
        for (uint32_t n : m.nodes) owner_[n] = static_cast<int>(i);
        boxes.push_back({0, 0, 0, 0, m.label, "", "fold", -1, m.nodes.size()});
      }
    }
    Edges(members, id);
    for (const Member& m : members) {
      if (m.node >= 0) owner_[static_cast<size_t>(m.node)] = -1;
      for (uint32_t n : m.nodes) owner_[n] = -1;
    }
    for (size_t i = 0; i < members.size(); ++i) {  // the folds' own views, after this one's edges
      Member& m = members[i];
      if (m.node >= 0) continue;
      boxes[i].unfold = m.group >= 0 ? GroupView(static_cast<size_t>(m.group), id)
                                     : View(std::move(m.parts), title + ", " + m.label, id);
    }
    views_[static_cast<size_t>(id)].boxes = std::move(boxes);
    return id;
  }

  // Each edge between two members once (dot lays out what it is given),
  // kept as from/to member indices in `lines` until the layout.
  void Edges(const std::vector<Member>& members, int id) {
    std::set<std::pair<int, int>> seen;
    auto each = [&](uint32_t n) {
      for (uint32_t u : g_.nodes[n].from) {
        const int a = owner_[u], b = owner_[n];
        if (a >= 0 && b >= 0 && a != b && seen.insert({a, b}).second) {
          views_[static_cast<size_t>(id)].lines.push_back({static_cast<double>(a), static_cast<double>(b)});
        }
      }
    };
    for (const Member& m : members) {
      if (m.node >= 0) each(static_cast<uint32_t>(m.node));
      for (uint32_t n : m.nodes) each(n);
    }
  }

  const ReportGraph& g_;
  size_t graph_, max_;
  std::vector<GraphView>& views_;
  std::vector<Group> groups_;
  std::vector<int> owner_;
};

}  // namespace

namespace {

constexpr double kCharPx = 7.0, kPadPx = 14, kNodeHeightPx = 22, kFoldHeightPx = 34;
constexpr size_t kLabelChars = 28;  // the page cuts longer labels (the full one is the box's title)

size_t Chars(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return std::min(n, kLabelChars);
}

void SizeBoxes(std::vector<GraphView>& views) {
  for (GraphView& v : views) {
    for (GraphBox& b : v.boxes) {
      size_t chars = Chars(b.label);
      if (b.kind == "fold") chars = std::max(chars, std::to_string(b.count).size() + 6);
      b.w = std::max(36.0, static_cast<double>(chars) * kCharPx + kPadPx);
      b.h = b.kind == "fold" ? kFoldHeightPx : kNodeHeightPx;
    }
  }
}

// Every view as one digraph of empty fixed-size boxes: nothing from the
// archive reaches dot, so nothing can be misread, and labels stay tsctl's.
std::string DotInput(const std::vector<GraphView>& views) {
  std::ostringstream out;
  char buf[96];
  for (size_t v = 0; v < views.size(); ++v) {
    out << "digraph v" << v << " {\n graph [rankdir=TB, nodesep=0.2, ranksep=0.3];\n"
        << " node [shape=box, fixedsize=true, label=\"\"];\n";
    for (size_t i = 0; i < views[v].boxes.size(); ++i) {
      std::snprintf(buf, sizeof buf, " n%zu [width=%.3f, height=%.3f];\n", i, views[v].boxes[i].w / 72,
                    views[v].boxes[i].h / 72);
      out << buf;
    }
    for (const std::vector<double>& e : views[v].lines) {
      out << " n" << static_cast<size_t>(e[0]) << " -> n" << static_cast<size_t>(e[1]) << ";\n";
    }
    out << "}\n";
  }
  return out.str();
}

// dot -Tplain's answer, one "graph ... stop" block per view, in order:
// "graph SCALE W H", "node NAME X Y W H LABEL ...", "edge TAIL HEAD N X1 Y1 ...";
// inches, y upwards. Returns false if it does not match what was asked.
bool ReadPlain(const std::string& plain, std::vector<GraphView>& views) {
  std::istringstream in(plain);
  std::string line;
  int v = -1;
  double height = 0;
  std::vector<std::vector<double>> lines;
  constexpr double kPx = 72, kMargin = 4;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string what;
    f >> what;
    if (what == "graph") {
      if (++v >= static_cast<int>(views.size())) return false;
      double scale = 0, width = 0;
      f >> scale >> width >> height;
      views[static_cast<size_t>(v)].width = width * kPx + 2 * kMargin;
      views[static_cast<size_t>(v)].height = height * kPx + 2 * kMargin;
      lines.clear();
    } else if (what == "node" && v >= 0) {
      std::string name;
      double x = 0, y = 0;
      f >> name >> x >> y;
      const size_t i = std::strtoul(name.c_str() + 1, nullptr, 10);
      if (name.size() < 2 || name[0] != 'n' || i >= views[static_cast<size_t>(v)].boxes.size()) return false;
      views[static_cast<size_t>(v)].boxes[i].x = x * kPx + kMargin;
      views[static_cast<size_t>(v)].boxes[i].y = (height - y) * kPx + kMargin;
    } else if (what == "edge" && v >= 0) {
      std::string tail, head;
      size_t n = 0;
      f >> tail >> head >> n;
      std::vector<double> points;
      for (size_t i = 0; i < n && i < 4096; ++i) {
        double x = 0, y = 0;
        if (!(f >> x >> y)) return false;
        points.push_back(x * kPx + kMargin);
        points.push_back((height - y) * kPx + kMargin);
      }
      lines.push_back(std::move(points));
    } else if (what == "stop" && v >= 0) {
      views[static_cast<size_t>(v)].lines = std::move(lines);
      lines.clear();
    }
  }
  return v + 1 == static_cast<int>(views.size());
}

}  // namespace

void LayoutReportGraphs(ReportGraphs& graphs, const GraphLayoutOptions& options) {
  graphs.views.clear();
  size_t total = 0;
  for (const ReportGraph& g : graphs.graphs) total += g.nodes.size();
  if (total == 0) return;
  auto not_drawn = [&](const std::string& why) {
    graphs.views.clear();
    graphs.note += (graphs.note.empty() ? "" : " ") + std::string("Not drawn: ") + why + "; the nodes are listed as text.";
  };
  if (total > options.max_nodes) {
    return not_drawn(std::to_string(total) + " nodes, more than the " + std::to_string(options.max_nodes) +
                     " the page draws");
  }
  for (size_t i = 0; i < graphs.graphs.size(); ++i) {
    if (!graphs.graphs[i].nodes.empty()) Folder(graphs.graphs[i], i, options.max_view_nodes, graphs.views).Run();
  }
  SizeBoxes(graphs.views);
  const ProgramRun run = RunProgram({options.dot, "-Tplain"}, DotInput(graphs.views), options.timeout_seconds);
  if (!run.started) return not_drawn("Graphviz's dot is not installed (" + run.error + ")");
  if (run.timed_out) return not_drawn("Graphviz's dot ran past " + std::to_string(options.timeout_seconds) + " s");
  if (run.exit_code != 0) {
    std::string first = run.err.substr(0, run.err.find('\n'));
    return not_drawn("Graphviz's dot failed (exit " + std::to_string(run.exit_code) + (first.empty() ? "" : ": ") +
                     first.substr(0, 200) + ")");
  }
  if (!ReadPlain(run.out, graphs.views)) return not_drawn("Graphviz's dot answered in a form tsctl does not read");
}

ReportGraphs Pt2ReportGraphs(const Archive& archive) {
  ReportGraphs out;
  for (const auto& [name, record] : Pt2ProgramRecords(archive)) {
    ReportGraph g{name, {}};
    std::map<std::string, uint32_t> index;
    for (Pt2GraphNode& n : Pt2GraphNodes(archive, name)) {
      const std::string kind = n.op == "placeholder" ? "input" : n.op == "output" ? "output" : "op";
      std::string label = kind == "op" ? n.target : n.name;
      if (label.rfind("torch.ops.", 0) == 0) label = label.substr(10);
      ReportGraphNode node{std::move(label), std::move(n.module), kind, {}};
      for (const std::string& u : n.uses) {
        if (auto it = index.find(u); it != index.end()) node.from.push_back(it->second);
      }
      index[n.name] = static_cast<uint32_t>(g.nodes.size());
      g.nodes.push_back(std::move(node));
    }
    out.graphs.push_back(std::move(g));
  }
  out.note = out.graphs.empty() ? "This .pt2 holds no exported program (an AOTInductor package keeps compiled code): no graph."
                                : "Each exported program's nodes, folded by the module they run in (nn_module_stack).";
  return out;
}

ReportGraphs TorchScriptReportGraphs(const std::string& path, const std::string& method, double timeout_seconds,
                                     bool allow_load_hooks) {
  GraphOptions o;
  o.path = path;
  o.allow_load_hooks = allow_load_hooks;
  o.method = method;
  o.inlined = true;
  o.format = GraphOptions::Format::kNodes;
  o.timeout_seconds = timeout_seconds;
  o.max_nodes = 200000;  // past 50,000 the page lists nodes, and only 5,000 of them
  const std::string lines = Graph(o);
  ReportGraph g{method, {}};
  std::istringstream in(lines);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    for (size_t at = 0;;) {
      const size_t tab = line.find('\t', at);
      f.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    if (f.size() != 4) throw Error(ErrorKind::kTorch, "the LibTorch child's graph has a line of " + std::to_string(f.size()) + " fields");
    ReportGraphNode n{f[2], f[0], f[1], {}};
    std::istringstream from(f[3]);
    for (std::string i; std::getline(from, i, ',');) {
      const unsigned long v = std::strtoul(i.c_str(), nullptr, 10);
      if (v < g.nodes.size()) n.from.push_back(static_cast<uint32_t>(v));  // earlier lines only
    }
    g.nodes.push_back(std::move(n));
  }
  ReportGraphs out;
  out.graphs.push_back(std::move(g));
  out.note = "The " + method + " method's graph as LibTorch inlines it (tsctl graph --inlined), each node in the module "
             "of its call stack; constants and attribute reads are not drawn.";
  return out;
}

}  // namespace tsctl
