// Text and JSON of tsctl migrate: per model how far it got and why not,
// then for a zoo how many reached each stage and what blocks the rest.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <pugixml.hpp>

#include "junit.h"
#include "../text/json_util.h"
#include "../text/units.h"
#include "migrate_summary.h"
#include "tsctl/escape.h"
#include "tsctl/migrate.h"

namespace tsctl {
namespace {

inline constexpr int kMigrateSchemaVersion = 1;

std::string Number(double v) { return ThreeDigits(v); }

}  // namespace

std::string MigrateDivergenceText(const MigrateDivergence& d) {
  if (!d.compared && d.note.empty()) return "";
  if (d.node.empty()) return "intermediates: " + d.note;
  std::string s = "first differing node " + d.node;
  if (!d.where.empty()) s += " at " + d.where;
  if (!d.program_node.empty()) s += " (the program's " + d.program_node + ")";
  if (d.max_abs >= 0) s += ": max abs " + Number(d.max_abs);
  return s + "; " + std::to_string(d.agreed) + " of " + std::to_string(d.matched) + " matched nodes agree before it";
}

namespace {

std::string CheckLine(const MigrateCheck& c) {
  std::string s = EscapeText(c.inputs) + ": ";
  if (!c.skipped.empty()) return s + "skipped, " + EscapeText(c.skipped);
  if (!c.error.empty()) {
    s += "DIFFERS, " + EscapeText(c.error);
    const std::string d = MigrateDivergenceText(c.divergence);
    return d.empty() ? s : s + "\n              " + EscapeText(d);
  }
  return s + "matched, max abs " + Number(c.max_abs) + ", max rel " + Number(c.max_rel);
}

void RenderOne(const MigrateResult& r, std::ostream& out) {
  out << EscapeText(r.path);
  if (r.written) out << " -> " << EscapeText(r.output);
  out << ": " << MigrateStageName(r.stage);
  if (r.written && !r.verified) out << " (written UNVERIFIED: --keep-unverified)";
  out << '\n';
  if (!r.error.empty()) out << "  error     " << EscapeText(r.error) << '\n';
  for (const MigrateBlocker& b : r.blockers) {
    out << "  blocker   " << EscapeText(b.kind);
    if (!b.where.empty()) out << " at " << EscapeText(b.where);
    if (!b.node.empty() && b.node != r.error) out << ": " << EscapeText(b.node);
    out << '\n';
    if (!b.advice.empty()) out << "            " << EscapeText(b.advice) << '\n';
  }
  if (!r.inputs.empty() || !r.input_source.empty()) {
    std::string specs;
    for (const std::string& i : r.inputs) specs += (specs.empty() ? "" : ", ") + i;
    out << "  inputs    " << EscapeText(specs.empty() ? r.input_source : specs + " (" + r.input_source + ")") << '\n';
  }
  if (!r.dynamic.empty()) {
    std::string d;
    for (const std::string& s : r.dynamic) d += (d.empty() ? "" : ", ") + s;
    out << "  dynamic   " << EscapeText(d) << '\n';
  }
  for (size_t i = 0; i < r.checks.size(); ++i) out << (i ? "            " : "  checks    ") << CheckLine(r.checks[i]) << '\n';
  if (!r.bench.empty()) {
    for (size_t i = 0; i < r.bench.size(); ++i) {
      const MigrateBenchForm& f = r.bench[i];
      out << (i ? "            " : "  bench     ");
      char line[160];
      std::snprintf(line, sizeof line, "%-21s ", MigrateFormName(f.form).c_str());
      out << line;
      if (!f.error.empty()) {
        out << "FAILED, " << EscapeText(f.error) << '\n';
        continue;
      }
      out << MigrateLatency(f.median_ns);
      if (i && f.ratio > 0) {
        std::snprintf(line, sizeof line, " (%.2fx TorchScript's)", f.ratio);
        out << line;
      }
      out << '\n';
    }
    const size_t iters = r.bench.front().latencies_ns.size();
    out << "            median of " << iters << " calls each after " << r.bench_warmup << " warm-up, in turns\n";
  }
  if (!r.converter.empty()) out << "  converter " << EscapeText(r.converter) << " (torch " << EscapeText(r.torch_version) << ")\n";
  for (const std::string& w : r.warnings) out << "  warning   " << EscapeText(w) << '\n';
}

void RenderSummary(const std::vector<MigrateResult>& results, std::ostream& out) {
  char line[160];
  out << "\n" << results.size() << " archives\n";
  std::snprintf(line, sizeof line, "  %-26s %s\n", "stage reached", "models");
  out << line;
  for (MigrateStage s : kMigrateStages) {
    if (s == MigrateStage::kNone) continue;
    std::snprintf(line, sizeof line, "  %-26s %d\n", MigrateStageName(s), MigrateReached(results, s));
    out << line;
  }
  const auto ranked = RankedMigrateBlockers(results);
  if (ranked.empty()) return;
  std::snprintf(line, sizeof line, "  %-26s %s\n", "blocker", "models stopped");
  out << line;
  for (const auto& [kind, n] : ranked) {
    std::snprintf(line, sizeof line, "  %-26s %d\n", EscapeText(kind).c_str(), n);
    out << line;
  }
}

nlohmann::json ToJson(const MigrateResult& r) {
  nlohmann::json j = {{"path", r.path},       {"output", r.written ? nlohmann::json(r.output) : nlohmann::json()},
                      {"stage", MigrateStageKey(r.stage)}, {"verified", r.verified},
                      {"written", r.written}, {"error", r.error},
                      {"input_source", r.input_source}, {"inputs", r.inputs},
                      {"dynamic", r.dynamic}, {"converter", r.converter},
                      {"torch_version", r.torch_version}, {"source_sha256", r.sha256},
                      {"warnings", r.warnings}, {"seconds", r.seconds}};
  j["blockers"] = nlohmann::json::array();
  for (const MigrateBlocker& b : r.blockers) {
    j["blockers"].push_back({{"kind", b.kind}, {"node", b.node}, {"where", b.where}, {"advice", b.advice}});
  }
  j["checks"] = nlohmann::json::array();
  for (const MigrateCheck& c : r.checks) {
    nlohmann::json outputs = nlohmann::json::array();
    for (const MigrateOutputError& o : c.outputs) {
      outputs.push_back({{"name", o.name}, {"max_abs", o.max_abs}, {"max_rel", o.max_rel}});
    }
    nlohmann::json check = {{"inputs", c.inputs}, {"matched", c.matched}, {"skipped", c.skipped}, {"max_abs", c.max_abs},
                            {"max_rel", c.max_rel}, {"error", c.error}, {"outputs", outputs}};
    const MigrateDivergence& d = c.divergence;
    if (d.compared || !d.note.empty()) {
      check["intermediates"] = {{"compared", d.compared}, {"node", d.node},       {"where", d.where},
                                {"program_node", d.program_node},               {"max_abs", d.max_abs},
                                {"matched", d.matched},   {"agreed", d.agreed}, {"note", d.note}};
    }
    j["checks"].push_back(check);
  }
  j["timings"] = nlohmann::json::array();
  for (const MigrateTiming& t : r.timings) j["timings"].push_back({{"step", t.step}, {"seconds", t.seconds}});
  if (!r.bench.empty()) {
    nlohmann::json forms = nlohmann::json::array();
    for (const MigrateBenchForm& f : r.bench) {
      forms.push_back({{"form", f.form}, {"median_ns", f.median_ns}, {"ratio", f.ratio}, {"error", f.error},
                       {"latencies_ns", f.latencies_ns}});
    }
    j["bench"] = {{"warmup", r.bench_warmup}, {"forms", forms}};
  }
  return j;
}

}  // namespace

std::vector<std::pair<std::string, int>> RankedMigrateBlockers(const std::vector<MigrateResult>& results) {
  std::map<std::string, int> count;
  for (const MigrateResult& r : results) {
    std::vector<std::string> kinds;
    for (const MigrateBlocker& b : r.blockers) kinds.push_back(b.kind);
    std::sort(kinds.begin(), kinds.end());
    kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
    for (const std::string& k : kinds) ++count[k];
  }
  std::vector<std::pair<std::string, int>> ranked(count.begin(), count.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return ranked;
}

std::string MigrateLatency(double ns) {
  char buf[32];
  if (ns < 1e6) {
    std::snprintf(buf, sizeof buf, "%.0f us", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buf, sizeof buf, "%.3g ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g s", ns / 1e9);
  }
  return buf;
}

std::string MigrateFormName(const std::string& form) {
  if (form == "torchscript") return "TorchScript";
  if (form == "program") return "torch.export program";
  if (form == "aoti") return "AOTInductor package";
  return form;
}

int MigrateReached(const std::vector<MigrateResult>& results, MigrateStage stage) {
  return static_cast<int>(std::count_if(results.begin(), results.end(), [&](const MigrateResult& r) {
    return static_cast<int>(r.stage) >= static_cast<int>(stage);
  }));
}

std::string RenderMigrateText(const std::vector<MigrateResult>& results) {
  std::ostringstream out;
  for (size_t i = 0; i < results.size(); ++i) {
    if (i) out << '\n';
    RenderOne(results[i], out);
  }
  if (results.size() > 1) RenderSummary(results, out);
  return out.str();
}

std::string RenderMigrateJson(const std::vector<MigrateResult>& results) {
  nlohmann::json j = {{"schema_version", kMigrateSchemaVersion}};
  j["results"] = nlohmann::json::array();
  for (const MigrateResult& r : results) j["results"].push_back(ToJson(r));
  nlohmann::json stages = nlohmann::json::object();
  for (MigrateStage s : kMigrateStages) {
    if (s != MigrateStage::kNone) stages[MigrateStageKey(s)] = MigrateReached(results, s);
  }
  j["summary"] = {{"archives", results.size()}, {"reached", stages}, {"blockers", nlohmann::json::array()}};
  for (const auto& [kind, n] : RankedMigrateBlockers(results)) j["summary"]["blockers"].push_back({{"kind", kind}, {"models", n}});
  MakeJsonUtf8(j);
  return DumpJson(j, 2);
}

std::string RenderMigrateJUnit(const std::vector<MigrateResult>& results) {
  pugi::xml_document doc;
  auto suites = JUnitSuites(doc, "tsctl migrate");
  auto suite = suites.append_child("testsuite");
  suite.append_attribute("name") = "tsctl migrate";
  int failures = 0;
  double seconds = 0;
  // EscapeText leaves only characters XML 1.0 allows; pugixml escapes markup.
  for (const MigrateResult& r : results) {
    const std::string path = EscapeText(r.path);
    auto tc = suite.append_child("testcase");
    tc.append_attribute("classname") = "migrate";
    tc.append_attribute("name") = path.c_str();
    char time[32];
    std::snprintf(time, sizeof time, "%.3f", r.seconds < 0 ? 0.0 : r.seconds);
    tc.append_attribute("time") = time;
    seconds += r.seconds;
    std::ostringstream text;
    RenderOne(r, text);
    if (!(r.written && r.verified)) {
      std::string message = std::string("stopped at ") + MigrateStageName(r.stage);
      if (r.written) message = "written unverified (--keep-unverified)";
      if (!r.blockers.empty()) message += ": " + EscapeText(r.blockers.front().kind);
      if (!r.error.empty()) message += ": " + EscapeText(r.error);
      auto f = tc.append_child("failure");
      f.append_attribute("message") = message.c_str();
      f.append_attribute("type") = MigrateStageKey(r.stage);
      f.text() = text.str().c_str();
      ++failures;
    } else {
      tc.append_child("system-out").text() = text.str().c_str();
    }
  }
  for (auto node : {suites, suite}) {
    node.append_attribute("tests") = static_cast<int>(results.size());
    node.append_attribute("failures") = failures;
    node.append_attribute("errors") = 0;
    char time[32];
    std::snprintf(time, sizeof time, "%.3f", seconds);
    node.append_attribute("time") = time;
  }
  std::ostringstream out;
  doc.save(out, "  ");
  return out.str();
}

}  // namespace tsctl
