// The report page's frame: head (CSP, inline CSS), header with the section
// links, the summary and signature sections, warnings, and the few lines of
// inline script for search and folding.
#include <cstdio>
#include <string>

#include "report_html.h"
#include "tsctl/escape.h"

namespace tsctl::report {
namespace {

// Nothing may be fetched: no network, no file, no font. Inline style and
// script only (the page's own), images only as data: URLs.
constexpr const char* kCsp =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

constexpr const char* kCss = R"CSS(
:root{--fg:#1d2330;--muted:#5d6675;--line:#d9dee7;--bg:#fff;--soft:#f4f6f9;--accent:#2f5fa7}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{position:sticky;top:0;z-index:1;background:#fff;border-bottom:1px solid var(--line);padding:8px 20px}
header h1{font-size:17px;margin:0 0 4px;word-break:break-all}
nav a{margin-right:14px;color:var(--accent);text-decoration:none}
main{padding:4px 20px 40px;max-width:1240px}
section{margin-top:18px}
h2{font-size:16px;border-bottom:1px solid var(--line);padding-bottom:3px;margin:0 0 8px}
h3{font-size:14px;margin:10px 0 4px}
table{border-collapse:collapse;margin:4px 0}
td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top;overflow-wrap:anywhere}
summary,h3,p,li{overflow-wrap:anywhere}
ul.plain{list-style:none;margin:0;padding:0}
.sw{display:inline-block;width:10px;height:10px;margin-right:4px}
.sw.g0{background:#4e79a7}.sw.g1{background:#f28e2b}.sw.g2{background:#59a14f}.sw.g3{background:#e15759}
.sw.g4{background:#76b7b2}.sw.g5{background:#edc948}.sw.g6{background:#b07aa1}.sw.g7{background:#9c755f}
th{color:var(--muted);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.kv th{width:190px}
.muted,.note{color:var(--muted)}
.warn{color:#9a3b00}
.pass{color:#1a7f37}.fail{color:#b42318;font-weight:600}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:var(--soft);padding:8px;overflow:auto;max-height:640px;margin:4px 0}
details{margin:2px 0}
summary{cursor:pointer}
ul.tree,ul.tree ul{list-style:none;margin:0;padding-left:18px}
ul.tree{padding-left:0}
ul.tree table{margin-left:18px;font-size:12.5px}
.t{color:var(--muted)}
.c{color:#555;margin-left:8px}
svg{max-width:100%;height:auto;display:block}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}
svg .bar{fill:#4e79a7}
svg .g0{fill:#4e79a7}svg .g1{fill:#f28e2b}svg .g2{fill:#59a14f}svg .g3{fill:#e15759}
svg .g4{fill:#76b7b2}svg .g5{fill:#edc948}svg .g6{fill:#b07aa1}svg .g7{fill:#9c755f}
svg rect.leaf{stroke:#fff;stroke-width:1}
svg polyline{fill:none;stroke-width:1.5}svg .l0{stroke:#4e79a7}svg .l1{stroke:#f28e2b}svg .axis{stroke:#9aa3b2;stroke-width:1}
svg rect.frame{fill:none;stroke:#1d2330;stroke-width:1}
.gw{overflow:auto;max-height:760px;border:1px solid var(--line);margin:4px 0}
svg.graph{max-width:none}svg .gn rect{fill:#eef3fb;stroke:#2f5fa7}svg .gi rect{fill:#e6ffec;stroke:#1a7f37}
svg .gd rect{fill:#fff6d6;stroke:#9a6700}svg .gf rect{fill:#dfe7f5;stroke:#2f5fa7;stroke-width:2}
svg .ge{fill:none;stroke:#5d6675}svg .ga{fill:#5d6675}svg text.gc{fill:#5d6675;font-size:10px}
.k{color:#8a2be2;font-weight:600}.s{color:#a31515}.cm{color:#6a737d;font-style:italic}.nu{color:#098658}
td.add{background:#e6ffec}td.del{background:#ffebe9}td.e{background:var(--soft)}tr.d td,tr.d th{background:#fff6d6}
table.sbs{width:100%}table.sbs td{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;white-space:pre-wrap;word-break:break-all;padding:0 6px;width:49%}
table.sbs td.ln{width:1%;color:var(--muted);text-align:right;white-space:nowrap}
tr.hunk td{color:var(--muted);background:#eef3fb}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:16px}
#tools{margin-top:4px}
#tools input{width:280px;padding:2px 6px}
footer{padding:0 20px}
[hidden]{display:none!important}
)CSS";

// Search (hides rows, tree entries and records that do not hold the query)
// and fold/unfold all. The page reads without it: the tools stay hidden.
constexpr const char* kScript = R"JS(
(function(){var d=document,t=d.getElementById('tools');t.hidden=false;
var all=function(o){d.querySelectorAll('details').forEach(function(e){e.open=o;});};
d.getElementById('expand').onclick=function(){all(true);};
d.getElementById('collapse').onclick=function(){all(false);};
d.getElementById('filter').oninput=function(){var q=this.value.toLowerCase();
d.querySelectorAll('.f').forEach(function(e){e.hidden=q!==''&&e.textContent.toLowerCase().indexOf(q)<0;});
if(q)d.querySelectorAll('#modules details').forEach(function(e){e.open=true;});};
var go=function(){var e=location.hash&&d.getElementById(location.hash.slice(1));
if(e&&e.tagName==='DETAILS'){e.open=true;e.scrollIntoView();}};window.addEventListener('hashchange',go);go();})();
)JS";

// What a page lists at most: a hostile archive may carry 60,000 warnings or
// 3,000 methods; `tsctl inspect --json` has them all.
constexpr size_t kMaxWarnings = 200;
constexpr size_t kMaxMethods = 200;
constexpr size_t kOpenValues = 16;  // a method's inputs or outputs shown unfolded


std::string Summary(const Page& page) {
  std::string out = "<section id=\"summary\"><h2>Summary</h2>" + KeyValues(page.summary);
  if (!page.producer.empty()) out += "<h3>Producer</h3>" + KeyValues(page.producer);
  return out + Warnings(page.warnings) + "</section>";
}

// A method's inputs or outputs; a list longer than kOpenValues folded (the
// overview counts them by kind).
std::string Values(const char* what, const std::vector<Value>& values) {
  if (values.empty()) return "<p class=\"muted\">No " + std::string(what) + " recorded.</p>";
  const bool fold = values.size() > kOpenValues;
  std::string out = fold ? "<details><summary>" + Grouped(values.size()) + " " + what + "</summary>" : "";
  out += "<table><thead><tr><th>" + std::string(what) +
                    "</th><th>type</th><th>dtype</th><th>shape</th></tr></thead><tbody>";
  for (const Value& v : values) {
    out += "<tr class=\"f\"><td class=\"mono\">" + E(v.name) + "</td><td>" + E(v.type) + "</td><td>" + E(v.dtype) +
           "</td><td class=\"mono\">" + E(v.shape) + "</td></tr>";
  }
  return out + (fold ? "</tbody></table></details>" : "</tbody></table>");
}

std::string Signature(const Page& page) {
  std::string out = "<section id=\"signature\"><h2>Signature</h2>";
  if (!page.signature_note.empty()) out += "<p class=\"note\">" + E(page.signature_note) + "</p>";
  if (page.methods.empty()) out += "<p class=\"muted\">No methods found.</p>";
  for (size_t i = 0; i < page.methods.size() && i < kMaxMethods; ++i) {
    const Method& m = page.methods[i];
    out += std::string(i < 4 ? "<details open>" : "<details>") + "<summary><code>" + E(m.name) + "</code></summary>";
    if (!m.signature.empty()) out += "<p><code>" + E(m.signature) + "</code></p>";
    out += Values("inputs", m.inputs) + Values("outputs", m.outputs);
    if (!m.note.empty()) out += "<p class=\"note\">" + E(m.note) + "</p>";
    out += "</details>";
  }
  if (page.methods.size() > kMaxMethods) out += More(page.methods.size() - kMaxMethods, "methods");
  return out + "</section>";
}

std::string Head(const std::string& title) {
  return std::string("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">") +
         "<meta http-equiv=\"Content-Security-Policy\" content=\"" + kCsp + "\">" +
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">" +
         "<meta name=\"generator\" content=\"tsctl " + TSCTL_VERSION + "\">" + "<title>tsctl report: " +
         E(title) + "</title><style>" + kCss + "</style></head>\n";
}

std::string Header(const std::string& title, const std::vector<NavLink>& nav) {
  std::string out = "<header><h1>" + E(title) + "</h1><nav>";
  for (const NavLink& s : nav) out += std::string("<a href=\"#") + s.id + "\">" + s.title + "</a>";
  out += "</nav><div id=\"tools\" hidden><input id=\"filter\" type=\"search\" placeholder=\"Filter\" "
         "aria-label=\"Filter rows, modules and records\"> <button id=\"expand\" type=\"button\">Expand all</button> "
         "<button id=\"collapse\" type=\"button\">Collapse all</button></div></header>\n";
  return out;
}

}  // namespace

std::string OneDecimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s < 0 ? 0.0 : s);
  return buf;
}

std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

std::string More(size_t n, const char* what, const char* tool) {
  return "<p class=\"note\">" + Grouped(n) + " more " + what + " not listed (" + tool + " lists them all).</p>";
}

std::string KeyValues(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "<table class=\"kv\"><tbody>";
  for (const auto& [k, v] : rows) out += "<tr class=\"f\"><th>" + E(k) + "</th><td>" + E(v) + "</td></tr>";
  return out + "</tbody></table>";
}

std::string Warnings(const std::vector<std::string>& warnings, const char* tool) {
  if (warnings.empty()) return "";
  std::string out = "<details open><summary class=\"warn\">" + std::to_string(warnings.size()) +
                    " warning(s)</summary><ul>";
  for (size_t i = 0; i < warnings.size() && i < kMaxWarnings; ++i) {
    out += "<li class=\"warn f\">" + E(warnings[i]) + "</li>";
  }
  out += "</ul>";
  if (warnings.size() > kMaxWarnings) out += More(warnings.size() - kMaxWarnings, "warnings", tool);
  return out + "</details>";
}

std::string PageStart(const std::string& title, const std::vector<NavLink>& nav) {
  return Head(title) + "<body>" + Header(title, nav) + "<main>\n";
}

std::string PageEnd() {
  return std::string("</main><footer class=\"muted\"><p>Written by tsctl ") + TSCTL_VERSION +
         ". Offline page: nothing is fetched.</p></footer><script>" + kScript + "</script></body></html>\n";
}

std::string RenderPage(Page page) {
  static const std::vector<NavLink> kNav = {{"overview", "Overview"}, {"summary", "Summary"},
                                            {"signature", "Signature"},
                                            {"modules", "Modules"}, {"operators", "Operators"},
                                            {"graph", "Graph"},     {"sizes", "Sizes"},
                                            {"code", "Code"},       {"extra", "Extra files"}};
  CapDepth(page.modules, kMaxTreeDepth);
  SumModules(page.modules);
  std::string out = PageStart(page.path, kNav);
  out += OverviewSection(page) + "\n" + Summary(page) + "\n" + Signature(page) + "\n" + ModulesSection(page) + "\n" + OperatorsSection(page) + "\n" +
         GraphSection(page.graph) + "\n" + SizesSection(page) + "\n";
  out += TextSection("code", "Code", page.code, page.code_note, true) + "\n";
  out += TextSection("extra", "Extra files", page.extra, page.extra_note, false) + "\n";
  return out + PageEnd();
}

}  // namespace tsctl::report
