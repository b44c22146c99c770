// The report page's charts, drawn by tsctl as inline SVG: the operator
// histogram (horizontal bars) and the size treemap (squarified: Bruls,
// Huizing and van Wijk, 2000), groups first, then the parts inside each.
// Labels and tooltips are escaped; numbers are tsctl's.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>

#include "report_html.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"

namespace tsctl::report {
namespace {

constexpr double kWidth = 1000;
constexpr double kTreemapHeight = 460;
constexpr size_t kMaxLeaves = 40;  // per group; the rest become one "N others"
constexpr int kColours = 8;        // CSS classes g0..g7

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
};


// A label that fits `width` pixels of 11px text, or "" if none does; a path
// too long for it is shown by its last part ("conv.py").
std::string Fit(std::string_view label, double width) {
  const double chars = width / 6.6;
  if (chars < 4) return "";
  const size_t slash = label.rfind('/');
  if (label.size() > chars && slash != std::string_view::npos && slash + 1 < label.size()) {
    label = label.substr(slash + 1);
  }
  return Ellipsis(label, static_cast<size_t>(chars));
}

// Rectangles for `weights` (largest first, all positive) filling `r`.
std::vector<Rect> Squarify(const std::vector<double>& weights, Rect r) {
  std::vector<Rect> out(weights.size());
  double total = 0;
  for (double w : weights) total += w;
  if (total <= 0 || r.w <= 0 || r.h <= 0) return out;
  const double scale = r.w * r.h / total;
  for (size_t i = 0; i < weights.size();) {
    const double side = std::min(r.w, r.h);
    double row = 0, best = std::numeric_limits<double>::infinity();
    size_t j = i;
    for (; j < weights.size(); ++j) {
      const double next = row + weights[j] * scale;
      const double worst = std::max(side * side * weights[i] * scale / (next * next),
                                    next * next / (side * side * weights[j] * scale));
      if (worst > best) break;
      best = worst;
      row = next;
    }
    const double thick = side > 0 ? row / side : 0;
    double offset = 0;
    for (size_t k = i; k < j; ++k) {
      const double len = thick > 0 ? weights[k] * scale / thick : 0;
      out[k] = r.w >= r.h ? Rect{r.x, r.y + offset, thick, len} : Rect{r.x + offset, r.y, len, thick};
      offset += len;
    }
    if (r.w >= r.h) {
      r.x += thick, r.w -= thick;
    } else {
      r.y += thick, r.h -= thick;
    }
    i = j;
  }
  return out;
}

struct Group {
  std::string name;
  uint64_t bytes = 0;
  std::vector<Block> leaves;
};

// Groups by name, largest first; in each, the largest kMaxLeaves parts and
// one for the rest. Parts of 0 bytes are left out.
std::vector<Group> GroupBlocks(const std::vector<Block>& blocks) {
  std::map<std::string, Group> by_name;
  for (const Block& b : blocks) {
    if (b.bytes == 0) continue;
    Group& g = by_name[b.group];
    g.name = b.group;
    g.bytes += b.bytes;
    g.leaves.push_back(b);
  }
  std::vector<Group> groups;
  for (auto& [name, g] : by_name) {
    std::stable_sort(g.leaves.begin(), g.leaves.end(), [](const Block& a, const Block& b) { return a.bytes > b.bytes; });
    if (g.leaves.size() > kMaxLeaves) {
      Block rest{g.name, Grouped(g.leaves.size() - kMaxLeaves + 1) + " others", 0};
      for (size_t i = kMaxLeaves - 1; i < g.leaves.size(); ++i) rest.bytes += g.leaves[i].bytes;
      g.leaves.resize(kMaxLeaves - 1);
      g.leaves.push_back(rest);
    }
    groups.push_back(std::move(g));
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.bytes > b.bytes; });
  return groups;
}

void Leaf(const Group& g, const Block& b, const Rect& r, int colour, uint64_t total, std::string& out) {
  char share[32];
  std::snprintf(share, sizeof share, "%.1f%%", 100.0 * static_cast<double>(b.bytes) / static_cast<double>(total));
  out += "<g><title>" + E(g.name) + ": " + E(b.label) + " " + HumanBytes(b.bytes) + " (" + share + ")</title>";
  out += "<rect class=\"leaf g" + std::to_string(colour) + "\" x=\"" + OneDecimal(r.x) + "\" y=\"" + OneDecimal(r.y) +
         "\" width=\"" + OneDecimal(r.w) + "\" height=\"" + OneDecimal(r.h) + "\"></rect>";
  const std::string label = r.h >= 14 ? Fit(b.label, r.w - 6) : "";
  if (!label.empty()) {
    out += "<text x=\"" + OneDecimal(r.x + 3) + "\" y=\"" + OneDecimal(r.y + 12) + "\">" + E(label) + "</text>";
  }
  if (!label.empty() && r.h >= 28) {
    const std::string size = Fit(HumanBytes(b.bytes), r.w - 6);
    if (!size.empty()) out += "<text x=\"" + OneDecimal(r.x + 3) + "\" y=\"" + OneDecimal(r.y + 25) + "\">" + size + "</text>";
  }
  out += "</g>";
}

}  // namespace

std::string HistogramSvg(const std::vector<Bar>& bars, const char* aria, std::string (*value_text)(uint64_t)) {
  if (value_text == nullptr) value_text = Grouped;
  constexpr double kRow = 18, kLabel = 330, kBarMax = 560;
  const double height = kRow * static_cast<double>(bars.size()) + 6;
  uint64_t max = 1;
  for (const Bar& b : bars) max = std::max(max, b.value);
  std::string out = std::string("<svg class=\"chart\" role=\"img\" aria-label=\"") + aria + "\" " +
                    "viewBox=\"0 0 " + OneDecimal(kWidth) + " " + OneDecimal(height) + "\" width=\"" + OneDecimal(kWidth) +
                    "\" height=\"" + OneDecimal(height) + "\">";
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = kRow * static_cast<double>(i) + 3;
    const double w = std::max(1.0, kBarMax * static_cast<double>(bars[i].value) / static_cast<double>(max));
    out += "<g><title>" + E(bars[i].label) + ": " + value_text(bars[i].value) + "</title>";
    out += "<text x=\"" + OneDecimal(kLabel - 6) + "\" y=\"" + OneDecimal(y + 12) + "\" text-anchor=\"end\">" +
           E(Fit(bars[i].label, kLabel - 10)) + "</text>";
    out += "<rect class=\"bar\" x=\"" + OneDecimal(kLabel) + "\" y=\"" + OneDecimal(y + 2) + "\" width=\"" + OneDecimal(w) +
           "\" height=\"" + OneDecimal(kRow - 5) + "\"></rect>";
    out += "<text x=\"" + OneDecimal(kLabel + w + 5) + "\" y=\"" + OneDecimal(y + 12) + "\">" + value_text(bars[i].value) +
           "</text></g>";
  }
  return out + "</svg>";
}

std::string TreemapSvg(const std::vector<Block>& blocks) {
  const std::vector<Group> groups = GroupBlocks(blocks);
  uint64_t total = 0;
  std::vector<double> weights;
  for (const Group& g : groups) {
    total += g.bytes;
    weights.push_back(static_cast<double>(g.bytes));
  }
  std::string out = "<svg class=\"chart\" role=\"img\" aria-label=\"Size treemap\" "
                    "viewBox=\"0 0 " + OneDecimal(kWidth) + " " + OneDecimal(kTreemapHeight) + "\" width=\"" + OneDecimal(kWidth) +
                    "\" height=\"" + OneDecimal(kTreemapHeight) + "\">";
  if (total == 0) return out + "</svg>";
  const std::vector<Rect> areas = Squarify(weights, {0, 0, kWidth, kTreemapHeight});
  for (size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    const Rect& a = areas[i];
    // A strip for the group's name where there is room, the parts below it.
    const bool titled = a.h >= 40 && a.w >= 60;
    const Rect inner{a.x + 1, a.y + (titled ? 16 : 1), a.w - 2, a.h - (titled ? 17 : 2)};
    std::vector<double> leaf_weights;
    for (const Block& b : g.leaves) leaf_weights.push_back(static_cast<double>(b.bytes));
    const std::vector<Rect> leaves = Squarify(leaf_weights, inner);
    out += "<g>";
    for (size_t k = 0; k < leaves.size(); ++k) Leaf(g, g.leaves[k], leaves[k], static_cast<int>(i % kColours), total, out);
    out += "<rect class=\"frame\" x=\"" + OneDecimal(a.x) + "\" y=\"" + OneDecimal(a.y) + "\" width=\"" + OneDecimal(a.w) + "\" height=\"" +
           OneDecimal(a.h) + "\"></rect>";
    const std::string title = titled ? Fit(g.name + " " + HumanBytes(g.bytes), a.w - 6) : "";
    if (!title.empty()) out += "<text x=\"" + OneDecimal(a.x + 3) + "\" y=\"" + OneDecimal(a.y + 12) + "\">" + E(title) + "</text>";
    out += "</g>";
  }
  return out + "</svg>";
}

}  // namespace tsctl::report
