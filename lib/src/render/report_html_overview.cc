// The overview every report page opens with: what the file is made of (its
// bytes by part, as a bar), what the format calls out (an ExecuTorch
// program's delegates), each method's inputs and outputs in one line, and
// the most called operators. Every figure comes from the page's own
// sections (sizes, methods, operators), so the overview and the section
// below it never disagree.
#include <algorithm>
#include <map>
#include <tuple>

#include "report_html.h"
#include "tsctl/text_util.h"

namespace tsctl::report {
namespace {

constexpr size_t kShownMethods = 6;    // methods with a line of their own
constexpr size_t kShownKinds = 6;      // kinds of value per list
constexpr size_t kShownOperators = 5;  // most called operators named
constexpr size_t kShownParts = 5;      // parts named under the bar
constexpr double kBarWidth = 1000, kBarHeight = 18;

// "43 inputs: 2 × Int tensor [1, 1], 41 × Float tensor [1, 8, 127]": values
// of one type, dtype and shape counted together, in the order first seen.
std::string ValueKinds(const char* what, const std::vector<Value>& values) {
  if (values.empty()) return std::string("no ") + what + "s";
  // Looked up by map: a hostile program may declare 60,000 values of as
  // many shapes, and a scan per value would be quadratic.
  using Kind = std::tuple<std::string, std::string, std::string>;
  std::vector<std::pair<Kind, size_t>> kinds;
  std::map<Kind, size_t> index;
  for (const Value& v : values) {
    Kind k{v.type, v.dtype, v.shape};
    auto [it, added] = index.emplace(k, kinds.size());
    if (added) kinds.push_back({std::move(k), 1});
    else ++kinds[it->second].second;
  }
  std::string out = Grouped(values.size()) + " " + what + (values.size() == 1 ? ":" : "s:");
  for (size_t i = 0; i < kinds.size() && i < kShownKinds; ++i) {
    const auto& [type, dtype, shape] = kinds[i].first;
    std::string text = type;
    if (!dtype.empty()) text += " " + dtype;
    if (!shape.empty()) text += " " + shape;
    out += std::string(i ? ", " : " ") + (kinds[i].second > 1 ? Grouped(kinds[i].second) + " × " : "") + text;
  }
  if (kinds.size() > kShownKinds) out += ", " + Grouped(kinds.size() - kShownKinds) + " more kinds";
  return out;
}

std::string MethodsRow(const Page& page) {
  if (page.methods.empty()) return "";
  std::string out = "<tr><th>methods</th><td><ul class=\"plain\">";
  for (size_t i = 0; i < page.methods.size() && i < kShownMethods; ++i) {
    const Method& m = page.methods[i];
    out += "<li class=\"f\"><a href=\"#signature\"><code>" + E(m.name) + "</code></a>: " +
           E(ValueKinds("input", m.inputs)) + "; " + E(ValueKinds("output", m.outputs)) + "</li>";
  }
  out += "</ul>";
  if (page.methods.size() > kShownMethods) {
    out += "<span class=\"muted\">" + Grouped(page.methods.size() - kShownMethods) + " more in Signature</span>";
  }
  return out + "</td></tr>";
}

std::string OperatorsRow(const Page& page) {
  if (page.operators.empty()) return "";
  std::vector<Bar> bars = page.operators;
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.value > b.value; });
  uint64_t calls = 0;
  for (const Bar& b : bars) calls += b.value;
  std::string out = "<tr><th>operators</th><td>" + Grouped(bars.size()) + " operators, " + Grouped(calls) +
                    " calls; most called:";
  for (size_t i = 0; i < bars.size() && i < kShownOperators; ++i) {
    out += std::string(i ? ", " : " ") + "<code>" + E(bars[i].label) + "</code> (" + Grouped(bars[i].value) + ")";
  }
  return out + " <a href=\"#operators\">all</a></td></tr>";
}

// One bar of the file's bytes by part, largest first, with the largest
// parts named below it.
std::string SizeRow(const Page& page) {
  std::vector<std::pair<std::string, uint64_t>> parts;
  uint64_t total = 0;
  for (const auto& [group, bytes] : GroupSums(page.sizes)) {
    parts.emplace_back(group, bytes);
    total += bytes;
  }
  if (total == 0) return "";
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string svg = "<svg class=\"chart\" role=\"img\" aria-label=\"Bytes by part\" viewBox=\"0 0 " +
                    OneDecimal(kBarWidth) + " " + OneDecimal(kBarHeight) + "\" width=\"" + OneDecimal(kBarWidth) +
                    "\" height=\"" + OneDecimal(kBarHeight) + "\">";
  std::string legend;
  double x = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& [group, bytes] = parts[i];
    const double w = kBarWidth * static_cast<double>(bytes) / static_cast<double>(total);
    const std::string share = Percent(bytes, total);
    svg += "<g><title>" + E(group) + ": " + HumanBytes(bytes) + " (" + share + ")</title><rect class=\"g" +
           std::to_string(i % 8) + " leaf\" x=\"" + OneDecimal(x) + "\" y=\"0\" width=\"" + OneDecimal(w) +
           "\" height=\"" + OneDecimal(kBarHeight) + "\"></rect></g>";
    x += w;
    if (i < kShownParts) {
      legend += std::string(i ? ", " : "") + "<span class=\"sw g" + std::to_string(i % 8) + "\"></span>" + E(group) +
                " " + HumanBytes(bytes) + " (" + share + ")";
    }
  }
  if (parts.size() > kShownParts) legend += ", " + Grouped(parts.size() - kShownParts) + " more";
  return "<tr><th>bytes</th><td>" + HumanBytes(total) + " in " + Grouped(parts.size()) +
         (parts.size() == 1 ? " part" : " parts") + " (<a href=\"#sizes\">Sizes</a>)" + svg + "</svg><div>" + legend + "</div></td></tr>";
}

}  // namespace

std::map<std::string, uint64_t> GroupSums(const std::vector<Block>& blocks) {
  std::map<std::string, uint64_t> sums;
  for (const Block& b : blocks) sums[b.group] += b.bytes;
  return sums;
}

std::string OverviewSection(const Page& page) {
  std::string rows = SizeRow(page);
  for (const auto& [k, v] : page.overview) rows += "<tr class=\"f\"><th>" + E(k) + "</th><td>" + E(v) + "</td></tr>";
  rows += MethodsRow(page) + OperatorsRow(page);
  std::string out = "<section id=\"overview\"><h2>Overview</h2>";
  if (rows.empty()) return out + "<p class=\"muted\">Nothing to show.</p></section>";
  return out + "<table class=\"kv ov\"><tbody>" + rows + "</tbody></table></section>";
}

}  // namespace tsctl::report
