// The pages of whole runs (lib/src/render/report_html_validate.cc,
// report_html_bench.cc): validate --report and bench --report, built from
// hand-made results; every string from an archive or LibTorch escaped.
#include <catch2/catch.hpp>

#include <string>

#include "../../lib/src/text/json_util.h"
#include "report_checks.h"
#include "test_util.h"
#include "tsctl/bench.h"
#include "tsctl/validate.h"

using namespace tsctl;
using tsctl::test::Count;

namespace {

const std::string kEvil = "<script>alert('x')</script>\"><img src=x onerror=y>\x1b[31m\x01\xff\xc3";

// The page's frame: the CSP, one script (tsctl's), nothing fetched, and none
// of `evil`'s markup, control bytes or invalid UTF-8 left raw.
void RequireSafe(const std::string& page) {
  test::RequireOfflineFrame(page);
  for (const char* raw : {"<script>alert", "<img", "onerror=y>", "\x1b", "\x01", "\xff", "\xc3\""}) {
    CHECK(page.find(raw) == std::string::npos);
  }
}

ArchiveReport Checked(const std::string& path) {
  ArchiveReport a;
  a.path = path;
  a.checks = {{"zip.crc", CheckStatus::kPass, "26 records read"},
              {"torch.run", CheckStatus::kWarn, "ran with inputs inferred"},
              {"torch.reference", CheckStatus::kFail, "output 0 differs"},
              {"zip.bomb", CheckStatus::kSkip, "skipped by --skip"}};
  a.ops = {"aten::relu", "aten::linear"};
  a.seconds = 1.25;
  return a;
}

}  // namespace

TEST_CASE("validate page: the summary counts, each archive's checks, inputs, outputs and reference", "[report]") {
  ValidationReport r;
  r.archives = {Checked("a.pt"), Checked("b.pt")};
  r.archives[1].checks.resize(1);  // b.pt: one PASS
  Json(r.archives[0].details) = {
      {"torch_seconds", 0.5},
      {"model",
       {{"schema", "forward(Tensor x) -> Tensor"},
        {"input_source", "testdata/ref.pt"},
        {"inputs_desc", "Float[2, 3]"},
        // As the child describes them: dtypes and shapes from the spec, and
        // from each output's "tensor".
        {"input_args", {{{"name", "x"}, {"value", "2x3:float32"}}}},
        {"outputs",
         {{{"name", "output"},
           {"desc", "Float[2, 10]"},
           {"tensor", {{"dtype", "float32"}, {"shape", {2, 10}}, {"device", "cpu"}}},
           {"nonfinite", 0}}}},
        {"reference_source", "testdata/ref.pt"},
        {"reference",
         {{{"name", "outputs"}, {"compared", true}, {"pass", false}, {"max_abs", 0.25}, {"max_rel", 0.125},
           {"rtol", 1e-5}, {"atol", 1e-8}, {"has_min_tolerance", true}, {"min_rtol", 0.13}, {"min_atol", 0.26}}}}}}};
  r.not_checked = {"missing.pt"};
  const std::string page = RenderHtml(r);
  RequireSafe(page);
  CHECK(page.find("<p class=\"fail\">FAILED</p>") != std::string::npos);
  CHECK(page.find("<th>checks</th><td>5: 2 PASS, 1 WARN, 1 FAIL, 1 SKIP</td>") != std::string::npos);
  CHECK(page.find("<th>archives</th><td>2 checked, 1 not checked</td>") != std::string::npos);
  CHECK(Count(page, "<section id=\"a") == 2);
  CHECK(page.find("<a href=\"#a2\">b.pt</a></td><td class=\"n\">1</td><td class=\"n\">0</td>") != std::string::npos);
  CHECK(page.find("<td class=\"fail\">FAIL</td><td class=\"mono\">torch.reference</td><td>output 0 differs</td>") !=
        std::string::npos);
  CHECK(page.find("<th>inputs from</th><td>testdata/ref.pt</td>") != std::string::npos);
  CHECK(page.find("<td class=\"mono\">2x3:float32</td><td class=\"mono\">float32</td><td class=\"mono\">[2, 3]</td>") !=
        std::string::npos);
  CHECK(page.find("<td class=\"mono\">Float[2, 10]</td><td class=\"mono\">float32</td><td class=\"mono\">[2, 10]</td>") !=
        std::string::npos);
  CHECK(page.find("<td class=\"fail\">FAIL</td><td class=\"n\">0.25</td><td class=\"n\">0.125</td>") != std::string::npos);
  CHECK(page.find("<td class=\"n\">0.13 / 0.26</td>") != std::string::npos);
  CHECK(page.find("missing.pt</td><td colspan=\"4\"") != std::string::npos);
  CHECK(Count(page, "<rect class=\"g") == 4);  // PASS, WARN, FAIL, SKIP parts of the bar
}

TEST_CASE("validate page: every string from an archive or LibTorch is escaped", "[report]") {
  ValidationReport r;
  ArchiveReport a = Checked(kEvil);
  for (CheckResult& c : a.checks) c.message = kEvil;
  a.ops = {kEvil};
  Json(a.details) = {{"reference_model", kEvil},
                     {"model",
                      {{{"method", kEvil},
                        {"schema", kEvil},
                        {"load_error", kEvil},
                        {"input_source", kEvil},
                        {"inputs_note", kEvil},
                        {"input_args", {{{"name", kEvil}, {"value", kEvil}}}},
                        {"outputs", {{{"name", kEvil}, {"desc", kEvil}}}},
                        {"intermediates", {{"first_differing", kEvil}}},
                        {"reference", {{{"name", kEvil}, {"compared", true}, {"error", kEvil}}}}}}}};
  MakeJsonUtf8(Json(a.details));  // as the child's result arrives
  r.archives = {a};
  r.not_checked = {kEvil};
  const std::string page = RenderHtml(r);
  RequireSafe(page);
  CHECK(Count(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=y&gt;") >= 14);
}

TEST_CASE("validate page: a run that passed, and one with nothing checked", "[report]") {
  ValidationReport r;
  r.archives = {Checked("a.pt")};
  r.archives[0].checks.resize(2);
  CHECK(RenderHtml(r).find("<p class=\"pass\">PASSED</p>") != std::string::npos);
  r.strict = true;  // the WARN fails it
  CHECK(RenderHtml(r).find("<p class=\"fail\">FAILED</p>") != std::string::npos);
  const std::string empty = RenderHtml(ValidationReport{});
  RequireSafe(empty);
  CHECK(empty.find("<th>checks</th><td>0: 0 PASS") != std::string::npos);
}

namespace {

BenchResult Benched(const std::string& text) {
  BenchResult r;
  r.path = r.method = r.device = r.input_source = r.settings = r.libtorch_version = text;
  r.inputs = {text};
  r.outputs = {{text, text, std::nullopt}};
  r.warnings = {text};
  r.warmup_count = 5;
  r.iters_count = 100;
  r.load_ns = 3000000;
  r.first_ns = 9000000;
  r.warmup_ns = {9000000, 4000000, 2100000, 2000000, 2000000};
  for (int i = 0; i < 100; ++i) r.latencies_ns.push_back(2000000 + 10000 * static_cast<uint64_t>(i % 10));
  r.wall_ns = 210000000;
  return r;
}

}  // namespace

TEST_CASE("bench page: percentiles, a histogram, every call in order, the profile as sorted bars", "[report]") {
  BenchResult r = Benched("m.pt");
  r.ops = {{"aten::relu", "", 100, 1000000, 1000000}, {"aten::conv2d", "[1, 3]", 100, 90000000, 80000000}};
  r.profiled_ns = 91000000;
  const std::string page = RenderHtml(r, {50, 90, 99});
  RequireSafe(page);
  for (const char* id : {"summary", "latency", "operators"}) {
    CHECK(Count(page, std::string("<section id=\"") + id + "\"") == 1);
  }
  CHECK(page.find("<th>p90</th><td>2.08 ms</td></tr><tr class=\"f\"><th>p99</th><td>2.09 ms</td>") != std::string::npos);
  CHECK(page.find("<th>calls</th><td>5 warm-up, 100 timed</td>") != std::string::npos);
  CHECK(Count(page, "<rect class=\"bar\"") == 30 + 2);  // the histogram's bins, the two operators
  CHECK(Count(page, "<polyline class=\"l1\"") == 1);    // the warm-up
  CHECK(Count(page, "<polyline class=\"l0\"") == 1);    // the timed calls
  // Sorted by self time: conv2d first.
  CHECK(page.find("aten::conv2d [1, 3]: 80.00 ms</title>") < page.find("aten::relu: 1.000 ms</title>"));
  CHECK(Count(page, "<th>input shapes</th>") == 1);  // --profile-shapes
  r.ops[1].shapes.clear();
  CHECK(Count(RenderHtml(r, {50}), "<th>input shapes</th>") == 0);
}

TEST_CASE("bench page: every string escaped, no profile, many calls averaged", "[report]") {
  BenchResult r = Benched(kEvil);
  r.ops = {{kEvil, kEvil, 1, 10, 10}};
  RequireSafe(RenderHtml(r, {50}));
  r.ops.clear();
  r.latencies_ns.assign(5000, 1000000);
  const std::string page = RenderHtml(r, {50});
  CHECK(page.find("No profile: run with --profile.") != std::string::npos);
  CHECK(page.find("a point is the mean of 6 calls") != std::string::npos);
  r.latencies_ns.clear();
  r.warmup_ns.clear();
  CHECK(RenderHtml(r, {50}).find("No timed calls.") != std::string::npos);
}

TEST_CASE("bench page of a sweep: every combination, the failed ones with their error", "[report]") {
  std::vector<SweepRow> rows(3);
  rows[0].ok = true;  // LibTorch's defaults
  rows[0].mean_ns = rows[0].median_ns = rows[0].p90_ns = 2e6;
  rows[0].iterations = 100;
  rows[0].run = Benched(kEvil);
  rows[1] = rows[0];
  rows[1].settings.inference_mode = false;
  rows[1].mean_ns = 3e6;
  rows[2].settings.freeze = true;
  rows[2].error = kEvil;
  const std::string page = RenderSweepHtml(rows);
  RequireSafe(page);
  CHECK(Count(page, "<section id=\"sweep\"") == 1);
  CHECK(Count(page, "<rect class=\"bar\"") == 2);
  CHECK(page.find("inference-mode off") != std::string::npos);
  CHECK(page.find("opt on, inf off, prof -, exec -, fuser -: 3.00 ms</title>") != std::string::npos);
  CHECK(page.find("<td colspan=\"6\" class=\"fail\">&lt;script&gt;") != std::string::npos);
}
