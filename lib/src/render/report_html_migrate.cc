// The page of `tsctl migrate --report FILE.html`: one page for the whole
// run, in the frame of tsctl report's pages (report_html.h). A summary (how
// many models reached each stage, as a table and as bars; a row per model
// linked to its section), the blockers ranked by the models they stop, then
// per model its stage, timings, blockers with their advice, each check's
// per-output errors and the file written with its provenance. Every string
// from an archive or from torch is escaped here (HtmlEscape).
#include <cstdio>

#include "../text/lists.h"
#include "migrate_summary.h"
#include "report_html.h"
#include "tsctl/escape.h"
#include "tsctl/migrate.h"

namespace tsctl {
namespace {

using report::E;
using report::KeyValues;
using Rows = std::vector<std::pair<std::string, std::string>>;

constexpr const char* kMigrateTool = "tsctl migrate --format json";
constexpr size_t kMaxListedPerModel = 200;  // blockers, checks and outputs listed per model


// An error figure as the text report writes it; "" where not compared (-1).
std::string Figure(double v) {
  return v < 0 ? "" : ThreeDigits(v);
}

std::string Id(size_t index) { return "a" + std::to_string(index + 1); }

bool Migrated(const MigrateResult& r) { return r.written && r.verified; }

// The stage a model reached, in its verdict's colour: packaged (and
// verified) passes, written unverified warns, anything short fails.
std::string StageCell(const MigrateResult& r) {
  if (Migrated(r)) return std::string("<span class=\"pass\">") + MigrateStageName(r.stage) + "</span>";
  if (r.written) return "<span class=\"warn\">written UNVERIFIED (--keep-unverified)</span>";
  return std::string("<span class=\"fail\">stopped: ") + MigrateStageName(r.stage) + "</span>";
}

std::string StagesTable(const std::vector<MigrateResult>& results) {
  std::string out = "<table><thead><tr><th>stage</th><th class=\"n\">models reached</th></tr></thead><tbody>";
  std::vector<report::Bar> bars;
  for (MigrateStage s : kMigrateStages) {
    if (s == MigrateStage::kNone) continue;
    const int n = MigrateReached(results, s);
    out += std::string("<tr class=\"f\"><td>") + MigrateStageName(s) + "</td><td class=\"n\">" + std::to_string(n) +
           "</td></tr>";
    bars.push_back({MigrateStageName(s), static_cast<uint64_t>(n)});
  }
  // In stage order (not sorted): each bar no longer than the one above it.
  return out + "</tbody></table>" + report::HistogramSvg(bars, "Models reaching each stage");
}

std::string SummarySection(const std::vector<MigrateResult>& results) {
  int migrated = 0;
  double seconds = 0;
  std::string rows;
  for (size_t i = 0; i < results.size(); ++i) {
    const MigrateResult& r = results[i];
    migrated += Migrated(r);
    seconds += r.seconds;
    rows += "<tr class=\"f\"><td><a href=\"#" + Id(i) + "\">" + E(r.path) + "</a></td><td>" + StageCell(r) +
            "</td><td class=\"mono\">" + (r.blockers.empty() ? "" : E(r.blockers.front().kind)) + "</td><td class=\"n\">" +
            report::Seconds(r.seconds) + "</td></tr>";
  }
  const bool passed = !results.empty() && migrated == static_cast<int>(results.size());
  const Rows kv = {{"result", std::to_string(migrated) + " of " + std::to_string(results.size()) +
                                  " migrated (verified and written)"},
                   {"time (models added up)", report::Seconds(seconds)}};
  std::string out = "<section id=\"summary\"><h2>Summary</h2><p class=\"" + std::string(passed ? "pass" : "fail") +
                    "\">" + (passed ? "ALL MIGRATED" : "NOT ALL MIGRATED") + "</p>" + KeyValues(kv);
  out += "<h3>Stages reached</h3>" + StagesTable(results);
  if (results.empty()) return out + "<p class=\"muted\">No archives.</p></section>";
  return out + "<h3>Models</h3><table><thead><tr><th>archive</th><th>stage reached</th><th>first blocker</th><th "
               "class=\"n\">time</th></tr></thead><tbody>" + rows + "</tbody></table></section>";
}

// The blocker kinds, most models stopped first, each with the models it
// stops (linked) and what to do about it.
std::string BlockersSection(const std::vector<MigrateResult>& results) {
  std::string out = "<section id=\"blockers\"><h2>Blockers</h2>";
  const auto ranked = RankedMigrateBlockers(results);
  if (ranked.empty()) return out + "<p class=\"muted\">Nothing blocked a model.</p></section>";
  out += "<table><thead><tr><th>blocker</th><th class=\"n\">models stopped</th><th>models</th><th>advice</th></tr>"
         "</thead><tbody>";
  for (const auto& [kind, n] : ranked) {
    std::string models, advice;
    for (size_t i = 0; i < results.size(); ++i) {
      for (const MigrateBlocker& b : results[i].blockers) {
        if (b.kind != kind) continue;
        if (advice.empty()) advice = b.advice;
        models += (models.empty() ? "" : ", ") + ("<a href=\"#" + Id(i) + "\">" + E(results[i].path) + "</a>");
        break;
      }
    }
    out += "<tr class=\"f\"><td class=\"mono\">" + E(kind) + "</td><td class=\"n\">" + std::to_string(n) + "</td><td>" +
           models + "</td><td>" + E(advice) + "</td></tr>";
  }
  return out + "</tbody></table></section>";
}

std::string TimingsTable(const MigrateResult& r) {
  std::string out = "<h3>Timings</h3><table><thead><tr><th>step</th><th class=\"n\">time</th></tr></thead><tbody>";
  for (const MigrateTiming& t : r.timings) {
    out += "<tr class=\"f\"><td>" + E(t.step) + "</td><td class=\"n\">" + report::Seconds(t.seconds) + "</td></tr>";
  }
  return out + "<tr class=\"f\"><th>in all</th><td class=\"n\">" + report::Seconds(r.seconds) + "</td></tr></tbody></table>";
}

std::string BlockersTable(const MigrateResult& r) {
  if (r.blockers.empty()) return "";
  std::string out = "<h3>Blockers</h3><table><thead><tr><th>kind</th><th>node</th><th>source line</th><th>advice</th>"
                    "</tr></thead><tbody>";
  for (size_t i = 0; i < r.blockers.size() && i < kMaxListedPerModel; ++i) {
    const MigrateBlocker& b = r.blockers[i];
    out += "<tr class=\"f\"><td class=\"mono\">" + E(b.kind) + "</td><td class=\"mono\">" + E(b.node) +
           "</td><td class=\"mono\">" + E(b.where) + "</td><td>" + E(b.advice) + "</td></tr>";
  }
  out += "</tbody></table>";
  if (r.blockers.size() > kMaxListedPerModel) out += report::More(r.blockers.size() - kMaxListedPerModel, "blockers", kMigrateTool);
  return out;
}

// One input set: its verdict, then each output's errors (or the check's
// largest, where no output was compared one by one).
std::string Check(const MigrateCheck& c) {
  std::string verdict = !c.skipped.empty() ? "<span class=\"muted\">skipped: " + E(c.skipped) + "</span>"
                        : c.matched        ? std::string("<span class=\"pass\">matched</span>")
                                           : "<span class=\"fail\">DIFFERS: " + E(c.error) + "</span>";
  std::string out = "<h3>On <code>" + E(c.inputs) + "</code></h3><p>" + verdict + "</p>";
  if (const std::string d = MigrateDivergenceText(c.divergence); !d.empty()) out += "<p class=\"mono\">" + E(d) + "</p>";
  if (!c.skipped.empty()) return out;
  out += "<table><thead><tr><th>output</th><th class=\"n\">max abs</th><th class=\"n\">max rel</th></tr></thead><tbody>";
  if (c.outputs.empty()) {
    const bool compared = c.max_abs >= 0;
    out += std::string("<tr class=\"f\"><td class=\"muted\">") + (compared ? "all outputs" : "not compared") +
           "</td><td class=\"n\">" + Figure(c.max_abs) + "</td><td class=\"n\">" + Figure(c.max_rel) + "</td></tr>";
  }
  for (size_t i = 0; i < c.outputs.size() && i < kMaxListedPerModel; ++i) {
    const MigrateOutputError& o = c.outputs[i];
    out += "<tr class=\"f\"><td class=\"mono\">" + E(o.name) + "</td><td class=\"n\">" + Figure(o.max_abs) +
           "</td><td class=\"n\">" + Figure(o.max_rel) + "</td></tr>";
  }
  out += "</tbody></table>";
  if (c.outputs.size() > kMaxListedPerModel) out += report::More(c.outputs.size() - kMaxListedPerModel, "outputs", kMigrateTool);
  return out;
}

// --bench: each form's median and its ratio to the archive's.
std::string BenchTable(const MigrateResult& r) {
  if (r.bench.empty()) return "";
  const size_t iters = r.bench.front().latencies_ns.size();
  std::string out = "<h3>Speed</h3><p>Median of " + std::to_string(iters) + " calls of each form after " +
                    std::to_string(r.bench_warmup) + " warm-up calls, in turns, on the sample inputs.</p>"
                    "<table><thead><tr><th>form</th><th class=\"n\">median</th><th class=\"n\">vs TorchScript</th>"
                    "</tr></thead><tbody>";
  for (const MigrateBenchForm& f : r.bench) {
    char ratio[32] = "";
    if (f.ratio > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", f.ratio);
    out += "<tr class=\"f\"><td>" + E(MigrateFormName(f.form)) + "</td>" +
           (f.error.empty() ? "<td class=\"n\">" + E(MigrateLatency(f.median_ns)) + "</td><td class=\"n\">" + ratio + "</td>"
                            : "<td colspan=\"2\" class=\"fail\">FAILED: " + E(f.error) + "</td>") +
           "</tr>";
  }
  return out + "</tbody></table>";
}

// The file written and the provenance record it carries.
std::string WrittenText(const MigrateResult& r) {
  if (!r.written) return "<h3>Written</h3><p class=\"muted\">Nothing written.</p>";
  const Rows rows = {{"file", r.output},
                     {"provenance record", std::string("extra/") + kMigrateRecord},
                     {"verified", r.verified ? "yes" : "no (--keep-unverified)"},
                     {"source sha256", r.sha256},
                     {"converter", r.converter},
                     {"torch", r.torch_version},
                     {"tsctl", TSCTL_VERSION}};
  return "<h3>Written</h3>" + KeyValues(rows);
}

std::string ModelSection(const MigrateResult& r, size_t index) {
  std::string out = "<section id=\"" + Id(index) + "\"><h2>" + E(r.path) + "</h2><p>" + StageCell(r) + " in " +
                    report::Seconds(r.seconds) + "</p>";
  Rows rows = {{"stage reached", MigrateStageName(r.stage)}};
  if (!r.error.empty()) rows.emplace_back("error", r.error);
  const std::string specs = JoinAll(r.inputs);
  if (!specs.empty() || !r.input_source.empty()) {
    rows.emplace_back("sample inputs", specs.empty() ? r.input_source : specs + " (" + r.input_source + ")");
  }
  if (!r.dynamic.empty()) rows.emplace_back("dynamic", JoinAll(r.dynamic));
  out += KeyValues(rows) + TimingsTable(r) + BlockersTable(r);
  for (size_t i = 0; i < r.checks.size() && i < kMaxListedPerModel; ++i) out += Check(r.checks[i]);
  if (r.checks.size() > kMaxListedPerModel) out += report::More(r.checks.size() - kMaxListedPerModel, "checks", kMigrateTool);
  return out + BenchTable(r) + WrittenText(r) + report::Warnings(r.warnings, kMigrateTool) + "</section>\n";
}

}  // namespace

std::string RenderMigrateHtml(const std::vector<MigrateResult>& results) {
  static const std::vector<report::NavLink> kNav = {
      {"summary", "Summary"}, {"blockers", "Blockers"}, {"archives", "Archives"}};
  const size_t n = results.size();
  std::string out = report::PageStart("tsctl migrate: " + std::to_string(n) + (n == 1 ? " archive" : " archives"), kNav);
  out += SummarySection(results) + "\n" + BlockersSection(results) + "\n<div id=\"archives\">";
  for (size_t i = 0; i < results.size(); ++i) out += ModelSection(results[i], i);
  return out + "</div>" + report::PageEnd();
}

}  // namespace tsctl
