// The page of `tsctl validate --report FILE.html`: one page for the whole
// run, in the frame of tsctl report's pages (report_html.h). A summary at
// the top (the verdict, the counts by verdict as a table and a stacked bar,
// one row per archive linked to its section), then per archive its checks,
// the inputs the run used and where they came from, the outputs, and the
// comparison with the reference and its error figures. Every string from an
// archive or from LibTorch is escaped here.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "../text/json_util.h"
#include "render_json.h"
#include "report_html.h"
#include "tsctl/escape.h"
#include "tsctl/torch_backend.h"
#include "tsctl/validate.h"

namespace tsctl {
namespace {

using report::E;
using report::KeyValues;
using Rows = std::vector<std::pair<std::string, std::string>>;
using nlohmann::json;

constexpr CheckStatus kStatuses[] = {CheckStatus::kPass, CheckStatus::kWarn, CheckStatus::kFail, CheckStatus::kSkip};
constexpr size_t kMaxListedPerMethod = 200;  // values, reference rows and operators listed per method


// The CSS class of a verdict's cell.
const char* StatusClass(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "pass";
    case CheckStatus::kWarn: return "warn";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kSkip: return "muted";
  }
  return "muted";
}

// A field of the details as text: strings as they are, numbers to six
// digits, true/false as yes/no, a shape as "[1, 3]"; "" when absent or null.
std::string JsonField(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_boolean()) return it->get<bool>() ? "yes" : "no";
  if (it->is_number_integer()) return it->dump();
  if (it->is_number()) return ShortNumber(it->get<double>());
  if (it->is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < it->size(); ++i) out += (i ? ", " : "") + (*it)[i].dump();
    return out + "]";
  }
  return it->dump();
}

// Rows of (label, field) that have a value.
Rows Present(const json& j, std::initializer_list<std::pair<const char*, const char*>> fields) {
  Rows rows;
  for (const auto& [label, key] : fields) {
    if (std::string v = JsonField(j, key); !v.empty()) rows.emplace_back(label, std::move(v));
  }
  return rows;
}

// A table of `items` (objects) with one column per key; cut at kMaxListedPerMethod.
std::string ItemTable(const json& items, std::initializer_list<std::pair<const char*, const char*>> columns) {
  if (!items.is_array() || items.empty()) return "";
  std::string out = "<table><thead><tr>";
  for (const auto& c : columns) out += std::string("<th>") + c.first + "</th>";
  out += "</tr></thead><tbody>";
  for (size_t i = 0; i < items.size() && i < kMaxListedPerMethod; ++i) {
    out += "<tr class=\"f\">";
    for (const auto& c : columns) out += "<td class=\"mono\">" + E(JsonField(items[i], c.second)) + "</td>";
    out += "</tr>";
  }
  out += "</tbody></table>";
  if (items.size() > kMaxListedPerMethod) out += report::More(items.size() - kMaxListedPerMethod, "rows", "tsctl validate --format json");
  return out;
}

// The comparison with the reference: one row per output, its verdict and
// error figures.
std::string Reference(const json& model) {
  const json& ref = model.is_object() && model.contains("reference") ? model["reference"] : json();
  Rows rows = Present(model, {{"reference from", "reference_source"}, {"compared", "reference_compared"},
                              {"error", "reference_error"}});
  if (!ref.is_array() || ref.empty()) return rows.empty() ? "" : "<h3>Reference</h3>" + KeyValues(rows);
  std::string out = "<h3>Outputs against the reference</h3>" + KeyValues(rows) +
                    "<table><thead><tr><th>output</th><th>verdict</th><th class=\"n\">max abs</th><th class=\"n\">max "
                    "rel</th><th class=\"n\">mean abs</th><th class=\"n\">mean rel</th><th class=\"n\">rtol</th><th "
                    "class=\"n\">atol</th><th class=\"n\">would pass at rtol / atol</th><th>error</th></tr></thead><tbody>";
  for (size_t i = 0; i < ref.size() && i < kMaxListedPerMethod; ++i) {
    const json& r = ref[i];
    const bool compared = r.value("compared", false), pass = r.value("pass", false);
    const std::string min = r.value("has_min_tolerance", false) ? JsonField(r, "min_rtol") + " / " + JsonField(r, "min_atol") : "";
    out += "<tr class=\"f\"><td class=\"mono\">" + E(JsonField(r, "name")) + "</td><td class=\"" +
           (!compared ? "muted" : pass ? "pass" : "fail") + "\">" + (!compared ? "not compared" : pass ? "PASS" : "FAIL") +
           "</td>";
    for (const char* k : {"max_abs", "max_rel", "mean_abs", "mean_rel", "rtol", "atol"}) {
      out += "<td class=\"n\">" + E(JsonField(r, k)) + "</td>";
    }
    out += "<td class=\"n\">" + E(min) + "</td><td>" + E(JsonField(r, "error")) + "</td></tr>";
  }
  out += "</tbody></table>";
  if (ref.size() > kMaxListedPerMethod) out += report::More(ref.size() - kMaxListedPerMethod, "outputs", "tsctl validate --format json");
  return out;
}

// One method's run: where the inputs came from, the inputs, the outputs,
// the reference, the timings, the intermediates compared.
std::string Model(const json& m, const std::string& method) {
  std::string out;
  if (!method.empty()) out += "<h3>Method <code>" + E(method) + "</code></h3>";
  Rows run = Present(m, {{"schema", "schema"}, {"loaded", "loaded"}, {"load time (ms)", "load_ms"}, {"load error", "load_error"},
                         {"ran", "ran"}, {"not run", "run_skipped"}, {"run error", "run_error"},
                         {"deterministic", "deterministic"}, {"largest difference between runs", "max_run_diff"},
                         {"determinism", "determinism_note"}});
  if (!run.empty()) out += KeyValues(run);
  Rows in = Present(m, {{"inputs from", "input_source"}, {"inputs", "inputs_desc"}, {"how they were found", "inputs_note"},
                        {"pin them with", "inputs_flags"}, {"inferred candidates tried", "candidates_tried"}});
  if (!in.empty()) out += "<h3>Inputs</h3>" + KeyValues(in);
  out += ItemTable(m.is_object() ? m.value("input_args", json()) : json(),
                   {{"name", "name"}, {"value", "value"}, {"dtype", "dtype"}, {"shape", "shape"}});
  const json outputs = m.is_object() ? m.value("outputs", json()) : json();
  if (outputs.is_array() && !outputs.empty()) {
    out += "<h3>Outputs</h3>" + ItemTable(outputs, {{"name", "name"}, {"value", "desc"}, {"dtype", "dtype"},
                                                   {"shape", "shape"}, {"NaN or Inf", "nonfinite"}});
  }
  out += Reference(m);
  if (m.is_object() && m.contains("intermediates") && m["intermediates"].is_object()) {
    Rows rows;
    for (const auto& [k, v] : m["intermediates"].items()) {
      if (!v.is_structured()) rows.emplace_back(k, JsonField(m["intermediates"], k.c_str()));
    }
    out += "<h3>Intermediates</h3>" + KeyValues(rows);
  }
  return out;
}

// The operators the methods call, folded.
std::string Operators(const std::vector<std::string>& ops) {
  if (ops.empty()) return "";
  std::string out = "<details><summary>" + std::to_string(ops.size()) + " operator(s) called</summary><ul>";
  for (size_t i = 0; i < ops.size() && i < kMaxListedPerMethod; ++i) out += "<li class=\"mono f\">" + E(ops[i]) + "</li>";
  out += "</ul>";
  if (ops.size() > kMaxListedPerMethod) out += report::More(ops.size() - kMaxListedPerMethod, "operators", "tsctl validate --list-ops");
  return out + "</details>";
}

std::string ResultClass(ArchiveResult r) {
  return r == ArchiveResult::kPassed ? "pass" : r == ArchiveResult::kFailed ? "fail" : "warn";
}

std::string Verdict(const ArchiveReport& a, bool strict) {
  const ArchiveResult r = a.Result(strict);
  std::string out = "<span class=\"" + ResultClass(r) + "\">" + ArchiveResultName(r) + "</span>";
  if (r == ArchiveResult::kNotRun) out += " <span class=\"muted\">" + E(a.not_run) + "</span>";
  return out;
}

std::string ArchiveSection(const ArchiveReport& a, size_t index, bool strict) {
  std::string out = "<section id=\"a" + std::to_string(index + 1) + "\"><h2>" + E(a.path) + "</h2><p>" +
                    Verdict(a, strict) + " in " + report::Seconds(a.seconds) + "</p>";
  out += "<table><thead><tr><th>verdict</th><th>check</th><th>message</th></tr></thead><tbody>";
  for (const CheckResult& c : a.checks) {
    out += std::string("<tr class=\"f\"><td class=\"") + StatusClass(c.status) + "\">" + CheckStatusName(c.status) +
           "</td><td class=\"mono\">" + E(c.id) + "</td><td>" + E(c.message) + "</td></tr>";
  }
  out += "</tbody></table>";
  const json& d = Json(a.details);
  Rows rows = Present(d, {{"reference model", "reference_model"}, {"LibTorch time (s)", "torch_seconds"},
                          {"operators from", "operators_source"}});
  if (!rows.empty()) out += KeyValues(rows);
  if (d.is_object() && d.contains("model")) {
    json model = d["model"];
    AddTensorTypes(model);  // dtypes and shapes as the JSON report has them
    if (model.is_array()) {
      for (const json& m : model) out += Model(m, m.is_object() && m.contains("method") ? JsonField(m, "method") : JsonField(m, "schema"));
    } else {
      out += Model(model, "");
    }
  }
  return out + Operators(a.ops) + "</section>\n";
}


// A bar of the run's checks by verdict, each part as wide as its count.
std::string CountsSvg(const int (&counts)[4], int total) {
  static const char* kClass[] = {"g2", "g5", "g3", "g7"};
  std::string out =
      "<svg class=\"chart\" role=\"img\" aria-label=\"Checks by verdict\" viewBox=\"0 0 1000 24\" width=\"1000\" "
      "height=\"24\">";
  double x = 0;
  for (int i = 0; i < 4 && total > 0; ++i) {
    if (counts[i] == 0) continue;
    const double w = 1000.0 * counts[i] / total;
    char geometry[96];
    std::snprintf(geometry, sizeof geometry, "x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"24\"", x, w);
    out += std::string("<g><title>") + CheckStatusName(kStatuses[i]) + ": " + std::to_string(counts[i]) +
           "</title><rect class=\"" + kClass[i] + "\" " + geometry + "></rect></g>";
    x += w;
  }
  return out + "</svg>";
}

// The verdict of the run, the counts by verdict, and a row per archive.
std::string ValidateSummary(const ValidationReport& report) {
  int counts[4] = {};
  double seconds = 0;
  std::string rows;
  for (size_t i = 0; i < report.archives.size(); ++i) {
    const ArchiveReport& a = report.archives[i];
    rows += "<tr class=\"f\"><td><a href=\"#a" + std::to_string(i + 1) + "\">" + E(a.path) + "</a></td>";
    for (int s = 0; s < 4; ++s) {
      const int c = a.Count(kStatuses[s]);
      counts[s] += c;
      rows += "<td class=\"n\">" + std::to_string(c) + "</td>";
    }
    rows += "<td>" + Verdict(a, report.strict) + "</td><td class=\"n\">" + report::Seconds(a.seconds) + "</td></tr>";
    seconds += a.seconds;
  }
  for (const std::string& p : report.not_checked) {
    rows += "<tr class=\"f\"><td>" + E(p) + "</td><td colspan=\"4\" class=\"muted\">not checked (the error is on "
            "stderr)</td><td><span class=\"fail\">FAILED</span></td><td></td></tr>";
  }
  const int total = counts[0] + counts[1] + counts[2] + counts[3];
  const ArchiveResult result = report.Result();
  const std::string verdict = std::string(ArchiveResultName(result)) +
                              (result == ArchiveResult::kNotRun && report.allow_not_run ? " (allowed: --allow-not-run)" : "");
  Rows kv = {{"result", verdict},
             {"archives", std::to_string(report.archives.size()) + " checked, " + std::to_string(report.not_checked.size()) +
                              " not checked"},
             {"checks", std::to_string(total) + ": " + std::to_string(counts[0]) + " PASS, " + std::to_string(counts[1]) +
                            " WARN, " + std::to_string(counts[2]) + " FAIL, " + std::to_string(counts[3]) + " SKIP"},
             {"strict (warnings fail)", report.strict ? "yes" : "no"},
             {"time (archives added up)", report::Seconds(seconds)},
             {"sandbox of LibTorch's children", SandboxDescription()}};
  return "<section id=\"summary\"><h2>Summary</h2><p class=\"" + ResultClass(result) + "\">" + E(verdict) + "</p>" + KeyValues(kv) + CountsSvg(counts, total) +
         "<table><thead><tr><th>archive</th><th class=\"n\">PASS</th><th class=\"n\">WARN</th><th "
         "class=\"n\">FAIL</th><th class=\"n\">SKIP</th><th>result</th><th class=\"n\">time</th></tr></thead><tbody>" +
         rows + "</tbody></table></section>";
}
}  // namespace

std::string RenderHtml(const ValidationReport& report) {
  static const std::vector<report::NavLink> kNav = {{"summary", "Summary"}, {"archives", "Archives"}};
  const size_t n = report.archives.size() + report.not_checked.size();
  std::string out = report::PageStart("tsctl validate: " + std::to_string(n) + (n == 1 ? " archive" : " archives"), kNav);
  out += ValidateSummary(report) + "\n<div id=\"archives\">";
  for (size_t i = 0; i < report.archives.size(); ++i) out += ArchiveSection(report.archives[i], i, report.strict);
  return out + "</div>" + report::PageEnd();
}

}  // namespace tsctl
