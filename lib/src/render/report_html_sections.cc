// The report page's sections over the module tree, the operators, the sizes
// and the text records, and the helpers the page builders share.
#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "report_html.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"

namespace tsctl::report {
namespace {

constexpr size_t kMaxTensorRows = 1000;    // per module
constexpr size_t kMaxOperatorBars = 40;    // in the chart; the table has them all
constexpr size_t kMaxTableRows = 5000;
constexpr size_t kMaxLeafRows = 200;       // per size group
constexpr uint64_t kOpenTextBytes = 16384; // the first code record is shown open up to this size


std::string TensorTable(const std::vector<Tensor>& tensors) {
  std::string out =
      "<table><thead><tr><th>tensor</th><th>role</th><th>dtype</th><th>shape</th><th class=\"n\">elements</th>"
      "<th class=\"n\">size</th></tr></thead><tbody>";
  for (size_t i = 0; i < tensors.size() && i < kMaxTensorRows; ++i) {
    const Tensor& t = tensors[i];
    out += "<tr class=\"f\"><td class=\"mono\">" + E(t.name) + "</td><td>" + E(t.role) + "</td><td>" + E(t.dtype) +
           "</td><td class=\"mono\">" + E(t.shape) + "</td><td class=\"n\">" + Grouped(t.numel) +
           "</td><td class=\"n\">" + HumanBytes(t.bytes) + "</td></tr>";
  }
  out += "</tbody></table>";
  if (tensors.size() > kMaxTensorRows) {
    out += "<p class=\"note\">" + Grouped(tensors.size() - kMaxTensorRows) + " more tensors not listed.</p>";
  }
  return out;
}

void ModuleHtml(const Module& m, int depth, bool open, std::string& out) {
  std::string head = "<span class=\"mono\">" + (m.name.empty() && depth == 0 ? std::string("(root)") : E(m.name)) +
                     "</span> <span class=\"t\">" + E(m.type) + "</span><span class=\"c\">" + Grouped(m.params) +
                     " params, " + HumanBytes(m.bytes);
  if (m.count > 1) head += ", " + Grouped(m.count - 1) + " submodules";
  head += "</span>";
  if (m.tensors.empty() && m.children.empty()) {
    out += "<li class=\"f\">" + head + "</li>";
    return;
  }
  out += std::string("<li class=\"f\"><details") + (open ? " open" : "") + "><summary>" + head + "</summary>";
  if (!m.tensors.empty()) out += TensorTable(m.tensors);
  if (!m.children.empty()) {
    out += "<ul>";
    for (const Module& c : m.children) ModuleHtml(c, depth + 1, open && depth < 1, out);
    out += "</ul>";
  }
  out += "</details></li>";
}

void FlattenModules(Module& m, const std::string& prefix, std::vector<Module>& out) {
  for (Module& c : m.children) {
    const std::string path = prefix + "." + c.name;
    std::vector<Module> grand = std::move(c.children);
    c.children.clear();
    c.name = path;
    out.push_back(std::move(c));
    Module holder;
    holder.children = std::move(grand);
    FlattenModules(holder, path, out);
  }
}

void Cap(Module& m, int depth, int max_depth) {
  if (depth < max_depth) {
    for (Module& c : m.children) Cap(c, depth + 1, max_depth);
    return;
  }
  std::vector<Module> flat;
  FlattenModules(m, m.name, flat);
  m.children = std::move(flat);
}

}  // namespace

std::string ModulesSection(const Page& page) {
  std::string out = "<section id=\"modules\"><h2>Modules</h2>";
  if (!page.modules_note.empty()) out += "<p class=\"note\">" + E(page.modules_note) + "</p>";
  if (page.modules.empty()) return out + "<p class=\"muted\">No module tree.</p></section>";
  uint64_t count = 0;
  for (const Module& m : page.modules) count += m.count;
  out += "<ul class=\"tree\">";
  for (const Module& m : page.modules) ModuleHtml(m, 0, count <= 400, out);
  return out + "</ul></section>";
}

std::string OperatorsSection(const Page& page) {
  std::string out = "<section id=\"operators\"><h2>Operators</h2>";
  if (!page.operators_note.empty()) out += "<p class=\"note\">" + E(page.operators_note) + "</p>";
  std::vector<Bar> bars = page.operators;
  if (bars.empty()) return out + "<p class=\"muted\">No operators found.</p></section>";
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.value > b.value; });
  uint64_t calls = 0;
  for (const Bar& b : bars) calls += b.value;
  out += "<p>" + Grouped(bars.size()) + " operators, " + Grouped(calls) + " calls.</p>";
  std::vector<Bar> top(bars.begin(), bars.begin() + static_cast<long>(std::min(bars.size(), kMaxOperatorBars)));
  out += HistogramSvg(top);
  if (bars.size() > top.size()) out += "<p class=\"note\">The " + Grouped(top.size()) + " most called; all below.</p>";
  out += "<details><summary>All " + Grouped(bars.size()) +
         " operators</summary><table><thead><tr><th>operator</th><th class=\"n\">calls</th></tr></thead><tbody>";
  for (size_t i = 0; i < bars.size() && i < kMaxTableRows; ++i) {
    out += "<tr class=\"f\"><td class=\"mono\">" + E(bars[i].label) + "</td><td class=\"n\">" +
           Grouped(bars[i].value) + "</td></tr>";
  }
  return out + "</tbody></table></details></section>";
}

std::string SizesSection(const Page& page) {
  std::string out = "<section id=\"sizes\"><h2>Sizes</h2>";
  if (!page.sizes_note.empty()) out += "<p class=\"note\">" + E(page.sizes_note) + "</p>";
  std::map<std::string, std::vector<const Block*>> groups;
  for (const Block& b : page.sizes) groups[b.group].push_back(&b);
  const std::map<std::string, uint64_t> sums = GroupSums(page.sizes);
  uint64_t total = 0;
  for (const auto& [group, sum] : sums) total += sum;
  if (total == 0) return out + "<p class=\"muted\">No sizes.</p></section>";
  out += TreemapSvg(page.sizes);
  out += "<table><thead><tr><th>part</th><th class=\"n\">size</th><th class=\"n\">bytes</th><th class=\"n\">share</th>"
         "</tr></thead><tbody>";
  std::string details;
  for (auto& [group, blocks] : groups) {
    const uint64_t sum = sums.at(group);
    out += "<tr class=\"f\"><td>" + E(group) + "</td><td class=\"n\">" + HumanBytes(sum) + "</td><td class=\"n\">" +
           Grouped(sum) + "</td><td class=\"n\">" + Percent(sum, total) + "</td></tr>";
    if (blocks.size() < 2) continue;
    std::stable_sort(blocks.begin(), blocks.end(), [](const Block* a, const Block* b) { return a->bytes > b->bytes; });
    details += "<details><summary>" + E(group) + ": " + Grouped(blocks.size()) + " parts</summary><table><tbody>";
    for (size_t i = 0; i < blocks.size() && i < kMaxLeafRows; ++i) {
      details += "<tr class=\"f\"><td class=\"mono\">" + E(blocks[i]->label) + "</td><td class=\"n\">" +
                 HumanBytes(blocks[i]->bytes) + "</td><td class=\"n\">" + Percent(blocks[i]->bytes, total) +
                 "</td></tr>";
    }
    details += "</tbody></table></details>";
  }
  out += "<tr><th>total</th><th class=\"n\">" + HumanBytes(total) + "</th><th class=\"n\">" + Grouped(total) +
         "</th><th></th></tr></tbody></table>";
  return out + details + "</section>";
}

std::string TextSection(const char* id, const char* title, const std::vector<Text>& texts, const std::string& note,
                        bool code) {
  std::string out = std::string("<section id=\"") + id + "\"><h2>" + title + "</h2>";
  if (!note.empty()) out += "<p class=\"note\">" + E(note) + "</p>";
  if (texts.empty()) return out + "<p class=\"muted\">None.</p></section>";
  const TextEscapeOptions multiline{.keep_newlines = true, .escape_backslash = false};
  for (size_t i = 0; i < texts.size(); ++i) {
    const Text& t = texts[i];
    const bool open = code && i == 0 && t.text.size() <= kOpenTextBytes;
    out += std::string("<details class=\"f\"") + (open ? " open" : "") + "><summary><code>" + E(t.name) +
           "</code><span class=\"c\">" + HumanBytes(t.size);
    if (!t.type.empty()) out += ", " + E(t.type);
    if (!t.note.empty()) out += ", " + E(t.note);
    out += "</span></summary>";
    if (!t.text.empty()) {
      out += "<pre><code>" + (code ? ColourCode(t.text) : HtmlEscape(t.text, multiline)) + "</code></pre>";
    }
    out += "</details>";
  }
  return out + "</section>";
}

void SumModules(std::vector<Module>& roots) {
  for (Module& m : roots) {
    SumModules(m.children);
    m.params = m.bytes = 0;
    m.count = 1;
    for (const Tensor& t : m.tensors) {
      if (t.role == "parameter") m.params += t.numel;
      // An ExecuTorch program's external tensors are another file's bytes (a
      // .ptd): listed, not counted in this file's (the size breakdown's) bytes.
      if (t.role != "external") m.bytes += t.bytes;
    }
    for (const Module& c : m.children) {
      m.params += c.params;
      m.bytes += c.bytes;
      m.count += c.count;
    }
  }
}

void CapDepth(std::vector<Module>& roots, int max_depth) {
  for (Module& m : roots) Cap(m, 0, max_depth);
}

namespace {

struct NameNode {
  std::vector<std::pair<std::string, std::unique_ptr<NameNode>>> kids;
  std::unordered_map<std::string, size_t> index;
  std::vector<Tensor> tensors;
};

Module ToModule(NameNode& node, std::string name) {
  Module m;
  m.name = std::move(name);
  m.tensors = std::move(node.tensors);
  for (auto& [kid_name, kid] : node.kids) m.children.push_back(ToModule(*kid, kid_name));
  return m;
}

}  // namespace

std::vector<Module> ModulesFromNames(std::vector<Tensor> tensors) {
  NameNode root;
  for (Tensor& t : tensors) {
    NameNode* node = &root;
    size_t start = 0;
    int depth = 0;
    for (size_t dot; (dot = t.name.find('.', start)) != std::string::npos && depth < kMaxTreeDepth; ++depth) {
      const std::string part = t.name.substr(start, dot - start);
      auto [it, added] = node->index.try_emplace(part, node->kids.size());
      if (added) node->kids.emplace_back(part, std::make_unique<NameNode>());
      node = node->kids[it->second].second.get();
      start = dot + 1;
    }
    t.name = t.name.substr(start);
    node->tensors.push_back(std::move(t));
  }
  std::vector<Module> roots;
  roots.push_back(ToModule(root, ""));
  return roots;
}

std::string Ellipsis(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, Utf8CutPoint(text, max > 3 ? max - 3 : 0))) + "\xe2\x80\xa6";
}

}  // namespace tsctl::report
