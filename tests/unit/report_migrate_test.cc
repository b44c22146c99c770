// The page of migrate --report (lib/src/render/report_html_migrate.cc),
// built from hand-made results: it needs no LibTorch and no Python, so it
// runs in every build; every string from an archive or torch escaped.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "report_checks.h"
#include "test_util.h"
#include "tsctl/error.h"
#include "tsctl/migrate.h"

using namespace tsctl;
using tsctl::test::Count;

namespace {

const std::string kEvil = "<script>alert('x')</script>\"><img src=x onerror=y>\x1b[31m\x01\xff\xc3";
const std::string kEvilShown = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=y&gt;";

void RequireSafe(const std::string& page) {
  test::RequireOfflineFrame(page);
  for (const char* raw : {"<script>alert", "<img", "onerror=y>", "\x1b", "\x01", "\xff", "\xc3\""}) {
    CHECK(page.find(raw) == std::string::npos);
  }
}

bool Has(const std::string& page, const std::string& part) { return page.find(part) != std::string::npos; }

// A traced CNN: packaged, verified on the sample (two outputs) and on one
// more size, one size skipped.
MigrateResult Packaged() {
  MigrateResult r;
  r.path = "zoo/cnn.pt";
  r.output = "out/cnn.pt2";
  r.stage = MigrateStage::kPackaged;
  r.verified = r.written = true;
  r.inputs = {"1x3x8x8:float32"};
  r.input_source = "extra/tsctl_inputs.json";
  r.dynamic = {"x.shape[2] in [2, inf]"};
  r.checks = {{"sample (1x3x8x8)", true, "", 2.5e-7, 1e-6, "", {{"output 0", 2.5e-7, 1e-6}, {"output 1", 0, 0}}},
              {"x.shape[2]=9 (1x3x9x8)", true, "", 3e-7, 2e-6, "", {{"output 0", 3e-7, 2e-6}, {"output 1", 0, 0}}},
              {"x.shape[3]=9 (1x3x8x9)", false, "the program specializes this size (Guard failed: x.size()[3] == 8)", -1,
               -1, "", {}}};
  r.converter = "torch._export.converter.TS2EPConverter";
  r.torch_version = "2.15.0";
  r.sha256 = std::string(64, 'a');
  r.timings = {{"inputs", 0.01}, {"load", 0.25}, {"conversion", 1.5}, {"verification on the sample", 0.125},
               {"verification on other shapes", 0.375}, {"packaging", 0.5}, {"provenance record", 0.02}};
  r.seconds = 2.78;
  return r;
}

MigrateResult Looped(const std::string& path) {
  MigrateResult r;
  r.path = path;
  r.stage = MigrateStage::kInputs;
  r.error = "RuntimeError: TS2EPConverter failed for node prim::Loop";
  r.blockers = {{"prim::Loop", "%y : Tensor = prim::Loop(%n, %true, %x)", "migrate_models.py:31",
                 "a loop whose trip count depends on an input: unroll it"}};
  r.timings = {{"inputs", 0.01}, {"load", 0.2}, {"conversion", 0.4}};
  r.seconds = 0.61;
  return r;
}

MigrateResult Noisy() {
  MigrateResult r;
  r.path = "zoo/noisy.pt";
  r.stage = MigrateStage::kConverted;
  r.error = "not verified on sample (2x3): output 0 differs: 6 of 6 values beyond rtol 1e-05, atol 1e-06";
  r.checks = {{"sample (2x3)", false, "", 0.5, 0.75, "output 0 differs: 6 of 6 values beyond rtol 1e-05, atol 1e-06",
               {{"output 0", 0.5, 0.75}}}};
  r.blockers = {{"wrong result", r.checks[0].error, "", "the program computes another result"}};
  r.seconds = 1;
  return r;
}

}  // namespace

TEST_CASE("migrate page: stages reached, blockers ranked, each model's timings, checks and file", "[report]") {
  const std::vector<MigrateResult> results = {Packaged(), Looped("zoo/loop.pt"), Noisy(), Looped("zoo/loop2.pt")};
  const std::string page = RenderMigrateHtml(results);
  RequireSafe(page);
  for (const char* id : {"summary", "blockers", "archives", "a1", "a2", "a3", "a4"}) {
    CHECK(Count(page, std::string("id=\"") + id + "\"") == 1);
  }
  CHECK(Count(page, "<section id=\"a") == 4);
  CHECK(Has(page, "<th>result</th><td>1 of 4 migrated (verified and written)</td>"));
  CHECK(Has(page, "<p class=\"fail\">NOT ALL MIGRATED</p>"));
  // How many reached each stage, as rows and as bars in stage order.
  CHECK(Has(page, "<td>loaded</td><td class=\"n\">4</td>"));
  CHECK(Has(page, "<td>inputs found</td><td class=\"n\">4</td>"));
  CHECK(Has(page, "<td>converted</td><td class=\"n\">2</td>"));
  CHECK(Has(page, "<td>verified on the sample</td><td class=\"n\">1</td>"));
  CHECK(Has(page, "<td>packaged</td><td class=\"n\">1</td>"));
  CHECK(Has(page, "aria-label=\"Models reaching each stage\""));
  CHECK(Count(page, "<rect class=\"bar\"") == 6);
  CHECK(page.find("<title>loaded: 4</title>") < page.find("<title>packaged: 1</title>"));
  // The blockers: the loop stops two models, ranked above the wrong result.
  const size_t blockers = page.find("<section id=\"blockers\"");
  CHECK(Has(page, "<td class=\"mono\">prim::Loop</td><td class=\"n\">2</td><td><a href=\"#a2\">zoo/loop.pt</a>, "
                  "<a href=\"#a4\">zoo/loop2.pt</a></td><td>a loop whose trip count"));
  CHECK(page.find("prim::Loop</td><td class=\"n\">2", blockers) < page.find("wrong result</td><td class=\"n\">1", blockers));
  // A model's section: its node, source line, advice; timings; per-output errors.
  CHECK(Has(page, "<td class=\"mono\">%y : Tensor = prim::Loop(%n, %true, %x)</td><td class=\"mono\">migrate_models.py:31"));
  CHECK(Has(page, "<tr class=\"f\"><td>conversion</td><td class=\"n\">1.50 s</td></tr>"));
  CHECK(Has(page, "<th>in all</th><td class=\"n\">2.78 s</td>"));
  CHECK(Has(page, "<td class=\"mono\">output 0</td><td class=\"n\">2.5e-07</td><td class=\"n\">1e-06</td>"));
  CHECK(Count(page, "<td class=\"mono\">output 1</td>") == 2);  // on the sample and on x.shape[2]=9
  CHECK(Has(page, "<h3>On <code>x.shape[2]=9 (1x3x9x8)</code></h3><p><span class=\"pass\">matched</span>"));
  CHECK(Has(page, "<span class=\"muted\">skipped: the program specializes this size (Guard failed: x.size()[3] == 8)"));
  CHECK(Has(page, "<span class=\"fail\">DIFFERS: output 0 differs: 6 of 6 values"));
  CHECK(Has(page, "<td class=\"mono\">output 0</td><td class=\"n\">0.5</td><td class=\"n\">0.75</td>"));
  // The file written and its provenance; nothing written for the others.
  CHECK(Has(page, "<th>file</th><td>out/cnn.pt2</td>"));
  CHECK(Has(page, "<th>provenance record</th><td>extra/tsctl_migrate.json</td>"));
  CHECK(Has(page, "<th>source sha256</th><td>" + std::string(64, 'a') + "</td>"));
  CHECK(Count(page, "Nothing written.") == 3);
  CHECK(Has(page, "<th>sample inputs</th><td>1x3x8x8:float32 (extra/tsctl_inputs.json)</td>"));
}

TEST_CASE("migrate page: every string from an archive or torch is escaped", "[report]") {
  MigrateResult r = Packaged();
  r.path = r.output = r.error = r.input_source = r.converter = r.torch_version = r.sha256 = kEvil;
  r.inputs = r.dynamic = r.warnings = {kEvil};
  r.blockers = {{kEvil, kEvil, kEvil, kEvil}};
  for (MigrateCheck& c : r.checks) {
    c.inputs = c.error = kEvil;
    for (MigrateOutputError& o : c.outputs) o.name = kEvil;
  }
  r.checks[0].matched = false;  // its error shown
  r.checks[0].divergence = {true, kEvil, kEvil, kEvil, 0.5, 3, 2, ""};
  r.checks[2].skipped = kEvil;
  r.timings = {{kEvil, 1}};
  const std::string page = RenderMigrateHtml({r, MigrateRefused(kEvil, Error(ErrorKind::kFormat, kEvil))});
  RequireSafe(page);
  CHECK(Count(page, kEvilShown) >= 28);
  // The text report escapes what the divergence names too.
  const std::string text = RenderMigrateText({r});
  CHECK(text.find("\x1b") == std::string::npos);
  CHECK(text.find("first differing node ") != std::string::npos);
  CHECK(text.find("2 of 3 matched nodes agree before it") != std::string::npos);
}

TEST_CASE("migrate --compare-intermediates: the first differing node, or why none, in text and JSON", "[report]") {
  MigrateResult r = Packaged();
  r.checks[0].matched = false;
  r.checks[0].error = "output 0 differs: 6 of 6 values beyond rtol 1e-05, atol 1e-06";
  r.checks[0].divergence = {true, "aten::rand", "File \"code/__torch__.py\", line 9", "rand (aten::rand)", 0.84, 6, 2, ""};
  r.checks[1].matched = false;
  r.checks[1].error = "output 0 differs";
  r.checks[1].divergence.compared = true;
  r.checks[1].divergence.matched = 4;
  r.checks[1].divergence.note = "the 4 nodes matched agree: the difference arises in the nodes that could not be matched";
  const std::string text = RenderMigrateText({r});
  CHECK(Has(text, "first differing node aten::rand at File \"code/__torch__.py\", line 9 (the program's rand (aten::rand)): "
                  "max abs 0.84; 2 of 6 matched nodes agree before it"));
  CHECK(Has(text, "intermediates: the 4 nodes matched agree"));
  const auto j = nlohmann::json::parse(RenderMigrateJson({r}));
  const auto& checks = j["results"][0]["checks"];
  CHECK(checks[0]["intermediates"]["node"] == "aten::rand");
  CHECK(checks[0]["intermediates"]["agreed"] == 2);
  CHECK(checks[1]["intermediates"]["node"] == "");
  CHECK_FALSE(checks[2].contains("intermediates"));  // not asked, or nothing differed
  const std::string page = RenderMigrateHtml({r});
  CHECK(Has(page, "first differing node aten::rand"));
}

TEST_CASE("migrate page: every model blocked, one refused, and a run of none", "[report]") {
  const MigrateResult refused = MigrateRefused("zoo/bad.pt", Error(ErrorKind::kFormat, "not a ZIP archive"));
  const std::string page = RenderMigrateHtml({Looped("zoo/loop.pt"), refused});
  RequireSafe(page);
  CHECK(Has(page, "<th>result</th><td>0 of 2 migrated (verified and written)</td>"));
  CHECK(Has(page, "<td>loaded</td><td class=\"n\">1</td>"));
  CHECK(Has(page, "<td>packaged</td><td class=\"n\">0</td>"));
  CHECK(Has(page, "<td><a href=\"#a2\">zoo/bad.pt</a></td><td><span class=\"fail\">stopped: not loaded</span></td>"
                  "<td class=\"mono\">not a TorchScript archive</td>"));
  CHECK(Has(page, "<th>error</th><td>not a ZIP archive</td>"));
  const std::string none = RenderMigrateHtml({});
  RequireSafe(none);
  CHECK(Has(none, "No archives."));
  CHECK(Has(none, "Nothing blocked a model."));
  CHECK(Count(none, "<section id=\"a") == 0);
  // Written but not verified (--keep-unverified): marked, not counted as migrated.
  MigrateResult kept = Noisy();
  kept.written = true;
  kept.output = "out/noisy.pt2";
  const std::string marked = RenderMigrateHtml({kept});
  CHECK(Has(marked, "<span class=\"warn\">written UNVERIFIED (--keep-unverified)</span>"));
  CHECK(Has(marked, "<th>verified</th><td>no (--keep-unverified)</td>"));
  CHECK(Has(marked, "<th>result</th><td>0 of 1 migrated"));
}

TEST_CASE("migrate --bench: each form's median and ratio in text, JSON and the page", "[report]") {
  MigrateResult r = Packaged();
  r.bench_warmup = kMigrateBenchWarmup;
  r.bench = {{"torchscript", {1'000'000, 1'200'000, 1'100'000}, 1'100'000, 1, ""},
             {"program", {2'000'000, 2'400'000, 2'200'000}, 2'200'000, 2, ""},
             {"aoti", {}, 0, 0, kEvil}};
  const std::string text = RenderMigrateText({r});
  CHECK(Has(text, "  bench     TorchScript           1.1 ms\n"));
  CHECK(Has(text, "            torch.export program  2.2 ms (2.00x TorchScript's)\n"));
  CHECK(Has(text, "            AOTInductor package   FAILED, "));
  CHECK(Has(text, "            median of 3 calls each after 3 warm-up, in turns\n"));
  const auto j = nlohmann::json::parse(RenderMigrateJson({r}));
  const auto& b = j["results"][0]["bench"];
  CHECK(b["warmup"] == 3);
  REQUIRE(b["forms"].size() == 3);
  CHECK(b["forms"][0]["form"] == "torchscript");
  CHECK(b["forms"][1]["median_ns"] == 2'200'000.0);
  CHECK(b["forms"][1]["ratio"] == 2.0);
  CHECK(b["forms"][1]["latencies_ns"].size() == 3);
  CHECK(b["forms"][2]["latencies_ns"].empty());
  CHECK(!nlohmann::json::parse(RenderMigrateJson({Packaged()}))["results"][0].contains("bench"));
  const std::string page = RenderMigrateHtml({r});
  RequireSafe(page);
  CHECK(Has(page, "<h3>Speed</h3><p>Median of 3 calls of each form after 3 warm-up calls, in turns"));
  CHECK(Has(page, "<tr class=\"f\"><td>torch.export program</td><td class=\"n\">2.2 ms</td><td class=\"n\">2.00x</td></tr>"));
  CHECK(Has(page, "<td colspan=\"2\" class=\"fail\">FAILED: " + kEvilShown));
  CHECK(!Has(RenderMigrateHtml({Packaged()}), "<h3>Speed</h3>"));
}
