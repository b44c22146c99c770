// The page of `tsctl bench --report FILE.html`, in the frame of tsctl
// report's pages (report_html.h): the run (what was timed, how), the
// latency (percentiles, a histogram of the timed calls, every call's time in
// order with the warm-up first), the per-operator profile as sorted bars
// when --profile ran; with --sweep, the table of the combinations and their
// means as bars. Charts are inline SVG drawn here; every string from the
// archive or LibTorch is escaped.
#include <algorithm>
#include <cstdio>

#include "../text/units.h"
#include "report_html.h"
#include "tsctl/bench.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

using report::E;
using report::KeyValues;
using report::OneDecimal;
using Rows = std::vector<std::pair<std::string, std::string>>;

constexpr const char* kBenchTool = "tsctl bench --json";
constexpr size_t kMaxOpBars = 40;     // operators drawn as bars
constexpr size_t kMaxOpRows = 200;    // operators listed in the table
constexpr size_t kMaxPoints = 1000;   // points of the per-call line (calls averaged in buckets beyond)
constexpr int kBins = 30;             // bars of the latency histogram
constexpr double kW = 1000, kH = 220, kLeft = 70, kBottom = 24;

// "12,345" as Grouped writes it, without std::string::insert, in which
// GCC 12 warns a false -Wrestrict when it is inlined here (GCC bug 105329).
std::string Thousands(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}
std::string NsText(uint64_t ns) { return Ms(static_cast<double>(ns)); }

std::string SvgStart(const char* aria) {
  return std::string("<svg class=\"chart\" role=\"img\" aria-label=\"") + aria + "\" viewBox=\"0 0 " + OneDecimal(kW) + " " +
         OneDecimal(kH) + "\" width=\"" + OneDecimal(kW) + "\" height=\"" + OneDecimal(kH) + "\">";
}
std::string SvgText(double x, double y, const std::string& text, const char* anchor = "start") {
  return "<text x=\"" + OneDecimal(x) + "\" y=\"" + OneDecimal(y) + "\" text-anchor=\"" + anchor + "\">" + text + "</text>";
}

// The timed calls in kBins bins from the fastest to the 99th percentile;
// the slower ones (a long tail would squeeze the rest into one bar) are
// counted in the last bin.
std::string HistogramOfCalls(std::vector<uint64_t> ns) {
  std::sort(ns.begin(), ns.end());
  const double lo = static_cast<double>(ns.front());
  const double span = std::max(1.0, static_cast<double>(ns[(ns.size() - 1) * 99 / 100]) - lo);
  std::vector<uint64_t> bins(kBins);
  for (uint64_t v : ns) bins[std::min<size_t>(kBins - 1, static_cast<size_t>((static_cast<double>(v) - lo) / span * kBins))]++;
  const uint64_t top = *std::max_element(bins.begin(), bins.end());
  const double plot_h = kH - kBottom - 14, bar_w = (kW - kLeft) / kBins;
  std::string out = SvgStart("Latency histogram of the timed calls");
  for (int i = 0; i < kBins; ++i) {
    const double h = plot_h * static_cast<double>(bins[i]) / static_cast<double>(top), x = kLeft + bar_w * i;
    const std::string to = i + 1 < kBins ? Ms(lo + span * (i + 1) / kBins) : NsText(ns.back());
    out += "<g><title>" + Ms(lo + span * i / kBins) + " to " + to + ": " +
           Thousands(bins[i]) + " calls</title><rect class=\"bar\" x=\"" + OneDecimal(x + 1) + "\" y=\"" + OneDecimal(14 + plot_h - h) +
           "\" width=\"" + OneDecimal(bar_w - 2) + "\" height=\"" + OneDecimal(h) + "\"></rect></g>";
  }
  out += SvgText(kLeft - 6, 24, Thousands(top) + " calls", "end") + SvgText(kLeft, kH - 6, Ms(lo)) +
         SvgText(kW - 4, kH - 6, Ms(lo + span) + (ns.back() > lo + span ? " (slower calls, up to " + NsText(ns.back()) + ", in the last bar)" : ""), "end");
  return out + "</svg>";
}

// Every call's time in call order, the warm-up calls (l1) then the timed
// ones (l0); beyond kMaxPoints calls, each point is the mean of a bucket.
// The scale ends at 4 times the timed median: slower points (the first
// calls) are drawn at the top, so that the timed calls are not flattened.
std::string CallsLine(const std::vector<uint64_t>& warmup, const std::vector<uint64_t>& timed, double median) {
  std::vector<uint64_t> all = warmup;
  all.insert(all.end(), timed.begin(), timed.end());
  const size_t per = (all.size() + kMaxPoints - 1) / kMaxPoints, points = (all.size() + per - 1) / per;
  std::vector<double> y(points);
  for (size_t p = 0; p < points; ++p) {
    double sum = 0;
    size_t n = 0;
    for (size_t i = p * per; i < all.size() && i < (p + 1) * per; ++i, ++n) sum += static_cast<double>(all[i]);
    y[p] = sum / static_cast<double>(n);
  }
  const double highest = *std::max_element(y.begin(), y.end());
  const double top = std::max(1.0, median > 0 ? std::min(highest, 4 * median) : highest), plot_h = kH - kBottom - 14;
  const double step = points > 1 ? (kW - kLeft - 4) / static_cast<double>(points - 1) : 0;
  const size_t split = warmup.size() / per;  // the first point of the timed calls
  auto line = [&](size_t from, size_t to, const char* cls) {
    std::string pts;
    for (size_t p = from; p < to; ++p) pts += (pts.empty() ? "" : " ") + OneDecimal(kLeft + step * p) + "," + OneDecimal(14 + plot_h - plot_h * std::min(y[p], top) / top);
    return pts.empty() ? "" : std::string("<polyline class=\"") + cls + "\" points=\"" + pts + "\"></polyline>";
  };
  std::string out = SvgStart("Latency of every call, warm-up first");
  out += "<rect class=\"axis\" x=\"" + OneDecimal(kLeft) + "\" y=\"" + OneDecimal(14 + plot_h) + "\" width=\"" + OneDecimal(kW - kLeft) +
         "\" height=\"1\"></rect>";
  if (!warmup.empty()) out += line(0, std::min(points, split + 1), "l1");
  out += line(std::min(split, points), points, "l0");
  out += SvgText(kLeft - 6, 18, (highest > top ? "\u2265 " : "") + Ms(top), "end") + SvgText(kLeft - 6, 14 + plot_h, "0", "end") +
         SvgText(kLeft, kH - 6, "call 1" + std::string(per > 1 ? " (a point is the mean of " + std::to_string(per) + " calls)" : "")) +
         SvgText(kW - 4, kH - 6, "call " + Thousands(all.size()), "end");
  return out + "</svg>";
}

Rows RunRows(const BenchResult& r) {
  std::string inputs;
  for (const std::string& i : r.inputs) inputs += (inputs.empty() ? "" : ", ") + i;
  std::string outputs;
  for (const BenchOutput& o : r.outputs) outputs += (outputs.empty() ? "" : ", ") + o.name + ": " + o.desc;
  Rows rows = {{"archive", r.path},         {"method", r.method},
               {"device", r.device},        {"inputs", inputs},
               {"inputs from", r.input_source}, {"settings", r.settings},
               {"LibTorch", r.libtorch_version},
               {"threads (intra-op, inter-op)", std::to_string(r.threads) + ", " + std::to_string(r.interop_threads)},
               {"instances", std::to_string(r.instances)},
               {"calls", Thousands(r.warmup_ns.size()) + " warm-up, " + Thousands(r.latencies_ns.size()) + " timed"},
               {"load", NsText(r.load_ns)},
               {"first call", NsText(r.first_ns)},
               {"warm-up settled after", r.settled_after < 0 ? "never" : std::to_string(r.settled_after) + " calls"},
               {"peak memory (RSS)", HumanBytes(r.peak_rss_bytes)},
               {"outputs", outputs}};
  if (r.cuda_peak_bytes >= 0) rows.emplace_back("peak CUDA memory", HumanBytes(static_cast<uint64_t>(r.cuda_peak_bytes)));
  return rows;
}

std::string LatencySection(const BenchResult& r, const std::vector<double>& percentiles) {
  std::string out = "<section id=\"latency\"><h2>Latency</h2>";
  if (r.latencies_ns.empty()) return out + "<p class=\"muted\">No timed calls.</p></section>";
  const Stats s = ComputeStats(r, percentiles);
  Rows rows = {{"min", NsText(s.min)}, {"mean", Ms(s.mean)}, {"median", Ms(s.median)}};
  for (const auto& [p, v] : s.percentiles) rows.emplace_back("p" + ShortNumber(p), Ms(v));
  rows.insert(rows.end(), {{"max", NsText(s.max)}, {"stddev", Ms(s.stddev)}, {"throughput", ShortNumber(s.throughput) + " calls/s"}});
  out += KeyValues(rows) + "<h3>Timed calls by latency</h3>" + HistogramOfCalls(r.latencies_ns) +
         "<h3>Every call in order (warm-up in orange, timed in blue)</h3>" + CallsLine(r.warmup_ns, r.latencies_ns, s.median);
  return out + "</section>";
}

std::string OperatorsSection(const BenchResult& r) {
  std::string out = "<section id=\"operators\"><h2>Operators</h2>";
  if (r.ops.empty()) return out + "<p class=\"muted\">No profile: run with --profile.</p></section>";
  std::vector<OpStat> ops = r.ops;
  std::stable_sort(ops.begin(), ops.end(), [](const OpStat& a, const OpStat& b) { return a.self_ns > b.self_ns; });
  std::vector<report::Bar> bars;
  for (size_t i = 0; i < ops.size() && i < kMaxOpBars; ++i) {
    bars.push_back({ops[i].name + (ops[i].shapes.empty() ? "" : " " + ops[i].shapes), ops[i].self_ns});
  }
  out += "<p class=\"note\">Self time of each operator over the profiled calls (" + NsText(r.profiled_ns) +
         " in all, sample " + ShortNumber(r.profile_sample) + ").</p>" + report::HistogramSvg(bars, "Operator self time", NsText);
  // The input shapes' column only with --profile-shapes.
  const bool shapes = std::any_of(ops.begin(), ops.end(), [](const OpStat& o) { return !o.shapes.empty(); });
  out += std::string("<table><thead><tr><th>operator</th>") + (shapes ? "<th>input shapes</th>" : "") +
         "<th class=\"n\">calls</th><th class=\"n\">total</th><th class=\"n\">self</th></tr></thead><tbody>";
  for (size_t i = 0; i < ops.size() && i < kMaxOpRows; ++i) {
    out += "<tr class=\"f\"><td class=\"mono\">" + E(ops[i].name) +
           (shapes ? "</td><td class=\"mono\">" + E(ops[i].shapes) : std::string()) + "</td><td class=\"n\">" + Thousands(ops[i].calls) + "</td><td class=\"n\">" + NsText(ops[i].total_ns) +
           "</td><td class=\"n\">" + NsText(ops[i].self_ns) + "</td></tr>";
  }
  out += "</tbody></table>";
  if (ops.size() > kMaxOpRows) out += report::More(ops.size() - kMaxOpRows, "operators", kBenchTool);
  return out + "</section>";
}

std::string SweepLabel(const SweepRow& r) {
  if (!r.aoti) return r.settings.Describe();
  return std::string(r.settings.inference_mode ? "inference mode" : "no_grad") + ", threads " +
         (r.threads == 0 ? std::string("default") : std::to_string(r.threads));
}

// The same, short enough for a bar's label: "opt on, inf off, prof -, exec on, fuser on".
std::string ShortSweepLabel(const SweepRow& r) {
  if (r.aoti) return SweepLabel(r);
  auto opt = [](const std::optional<bool>& v) { return v ? OnOff(*v) : std::string("-"); };
  const ExecutionSettings& e = r.settings;
  return "opt " + OnOff(e.optimized_execution) + ", inf " + OnOff(e.inference_mode) + ", prof " + opt(e.jit_profiling) +
         ", exec " + opt(e.jit_executor) + ", fuser " + opt(e.tensor_fuser) + (e.freeze ? ", freeze" : "") +
         (e.optimize_for_inference ? ", ofi" : "") + (e.cache_cleaning ? ", cc" : "");
}

std::string SweepSection(const std::vector<SweepRow>& rows) {
  const SweepChoice choice = ChooseSweep(rows);
  std::string out = "<section id=\"sweep\"><h2>Sweep</h2><p>" + E(choice.reason) + "</p>";
  out += "<table><thead><tr><th>settings</th><th class=\"n\">mean</th><th class=\"n\">median</th><th class=\"n\">p90</th>"
         "<th class=\"n\">stddev</th><th class=\"n\">calls</th><th class=\"n\">first call</th><th></th></tr></thead><tbody>";
  std::vector<report::Bar> bars;
  for (const SweepRow& r : rows) {
    const char* mark = &r == choice.recommended ? "recommended" : &r == choice.defaults ? "defaults" : "";
    if (!r.ok) {
      out += "<tr class=\"f\"><td>" + E(SweepLabel(r)) + "</td><td colspan=\"6\" class=\"fail\">" + E(r.error) +
             "</td><td></td></tr>";
      continue;
    }
    bars.push_back({ShortSweepLabel(r), static_cast<uint64_t>(r.mean_ns)});
    out += "<tr class=\"f" + std::string(*mark == 'r' ? " d" : "") + "\"><td>" + E(SweepLabel(r)) + "</td><td class=\"n\">" +
           Ms(r.mean_ns) + "</td><td class=\"n\">" + Ms(r.median_ns) + "</td><td class=\"n\">" + Ms(r.p90_ns) +
           "</td><td class=\"n\">" + Ms(r.stddev_ns) + "</td><td class=\"n\">" + Thousands(r.iterations) +
           "</td><td class=\"n\">" + NsText(r.first_ns) + "</td><td>" + mark + "</td></tr>";
  }
  std::stable_sort(bars.begin(), bars.end(), [](const report::Bar& a, const report::Bar& b) { return a.value < b.value; });
  return out + "</tbody></table><h3>Mean latency, fastest first</h3><p class=\"note\">opt: optimized execution, inf: "
         "inference mode, prof: JIT profiling, exec: JIT executor, fuser: tensor fuser (-: LibTorch's default).</p>" +
         report::HistogramSvg(bars, "Mean latency per settings", NsText) + "</section>";
}

const std::vector<report::NavLink> kNav = {{"summary", "Summary"}, {"latency", "Latency"}, {"operators", "Operators"}};

}  // namespace

std::string RenderHtml(const BenchResult& r, const std::vector<double>& percentiles) {
  std::string out = report::PageStart("tsctl bench: " + r.path, kNav);
  out += "<section id=\"summary\"><h2>Summary</h2>" + KeyValues(RunRows(r)) +
         report::Warnings(BenchWarnings(r, ComputeStats(r, percentiles)), kBenchTool) + "</section>\n";
  out += LatencySection(r, percentiles) + "\n" + OperatorsSection(r) + "\n";
  return out + report::PageEnd();
}

std::string RenderSweepHtml(const std::vector<SweepRow>& rows) {
  static const std::vector<report::NavLink> kSweepNav = {{"summary", "Summary"}, {"sweep", "Sweep"}};
  const SweepRow* ran = nullptr;
  for (const SweepRow& r : rows) {
    if (r.ok && ran == nullptr) ran = &r;
  }
  std::string out = report::PageStart("tsctl bench --sweep: " + (ran ? ran->run.path : std::string()), kSweepNav);
  Rows summary = {{"combinations", std::to_string(rows.size())}};
  if (ran) {
    Rows run = RunRows(ran->run);
    summary.insert(summary.end(), run.begin(), run.begin() + 5);  // archive, method, device, inputs, inputs from
  }
  out += "<section id=\"summary\"><h2>Summary</h2>" + KeyValues(summary) + "</section>\n" + SweepSection(rows) + "\n";
  return out + report::PageEnd();
}

}  // namespace tsctl
