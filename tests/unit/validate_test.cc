#include <catch2/catch.hpp>
#include <zlib.h>

#include <random>
#include <regex>
#include <thread>
#include <set>

#include "../../lib/src/render/render_json.h"
#include "../../lib/src/text/json_util.h"
#include "test_util.h"
#include "../../lib/src/render/tensor_type.h"
#include "tsctl/inspect.h"
#include "tsctl/output.h"
#include "tsctl/validate.h"
#include "../../lib/src/commands/check_context.h"
#include "../../lib/src/commands/validate_internal.h"
#include "../../lib/src/formats/check_table.h"
#include "tsctl/zip.h"

using namespace tsctl;

namespace {

ValidateOptions NoTorch() {
  ValidateOptions o;
  o.load = false;
  return o;
}

ArchiveReport Check(const std::string& bytes, const std::string& name = "<memory>") {
  return ValidateSource(MakeMemorySource(bytes, name), name, NoTorch());
}

CheckStatus StatusOf(const ArchiveReport& r, const std::string& id) {
  for (const auto& c : r.checks) {
    if (c.id == id) return c.status;
  }
  return CheckStatus::kSkip;
}

using test::MakeZip;
using test::RawRecord;
using test::Stored;

// The records of a real archive, re-packed by MakeZip (so tests can add hostile ones).
std::vector<RawRecord> RecordsOf(const std::string& file) {
  auto src = MakeMemorySource(test::Slurp(test::TestData(file)));
  ZipLayout layout = ReadZipLayout(*src);
  std::vector<RawRecord> out;
  for (const auto& e : layout.entries) out.push_back(Stored(e.name, ReadEntry(*src, e)));
  return out;
}

}  // namespace

TEST_CASE("validate: a sound archive passes every structural check", "[validate]") {
  ArchiveReport r = Check(test::Slurp(test::TestData("traced_cnn.pt")));
  for (const auto& c : r.checks) {
    INFO(c.id << ": " << c.message);
    CHECK(c.status == CheckStatus::kPass);
  }
  CHECK(r.checks.size() >= 14);
}

TEST_CASE("output switch: one name per format, each result's Render is its renderer, a missing one a usage error",
          "[validate][output]") {
  for (OutputFormat f : {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kJUnit, OutputFormat::kDot}) {
    REQUIRE(OutputFormatByName(OutputFormatName(f)) == f);
  }
  CHECK_FALSE(OutputFormatByName("xml").has_value());
  ValidationReport report;
  report.archives.push_back(Check(test::Slurp(test::TestData("traced_cnn.pt"))));
  report.archives.back().ops = {"aten::conv2d", "aten::relu"};
  std::ostringstream text;
  RenderText(report, text);
  CHECK(Render(report, OutputFormat::kText) == text.str());
  CHECK(Render(report, OutputFormat::kJson) == RenderJson(report) + "\n");
  CHECK(Render(report, OutputFormat::kJUnit) == RenderJUnit(report));
  CHECK(RenderOperatorList(report, false) == "aten::conv2d\naten::relu\n");
  CHECK(RenderOperatorList(report, true).rfind("# ", 0) == 0);
  try {
    Render(report, OutputFormat::kDot);
    FAIL("no validate renderer for dot");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    CHECK(std::string(e.what()).find("--format dot is not an output of validate (it has text, json, junit)") != std::string::npos);
  }
  Archive a = Archive::Open(OpenFileSource(test::TestData("traced_cnn.pt")));
  const ArchiveInfo info = Inspect(a);
  CHECK(Render(info, OutputFormat::kJson) == RenderJson(info) + "\n");
  CHECK_THROWS_AS(Render(info, OutputFormat::kJUnit), Error);
}

TEST_CASE("validate: the docs list every check of the table, and no other", "[validate][docs]") {
  // The table (validate_steps.cc) gives CheckIds(); tsctl-validate(1) names
  // each in bold, and gives a .TP entry only to a check of the table;
  // validate.md's Checks table has a row for each.
  const std::string man = test::Slurp(test::TestData("../man/tsctl-validate.1"));
  const std::string md = test::Slurp(test::TestData("../docs/manual/validate.md"));
  const size_t checks = md.find("### Checks\n");
  REQUIRE(checks != std::string::npos);
  const std::string md_table = md.substr(checks, md.find("\n### ", checks + 1) - checks);
  std::set<std::string> ids(CheckIds().begin(), CheckIds().end());
  for (const std::string& id : ids) {
    INFO(id);
    CHECK((man.find(".B " + id + "\n") != std::string::npos || man.find(".BR " + id + " ") != std::string::npos));
    CHECK(md_table.find("| `" + id + "` |") != std::string::npos);
  }
  std::regex tp(R"(\.TP\n\.B ([a-z0-9]+\.[a-z_0-9]+)\n)");
  for (auto it = std::sregex_iterator(man.begin(), man.end(), tp); it != std::sregex_iterator(); ++it) {
    INFO((*it)[1].str());
    CHECK(ids.count((*it)[1].str()) == 1);
  }
  std::regex row(R"(\n\| `([a-z0-9]+\.[a-z_0-9*]+)` \|)");
  size_t rows = 0;
  for (auto it = std::sregex_iterator(md_table.begin(), md_table.end(), row); it != std::sregex_iterator(); ++it, ++rows) {
    INFO((*it)[1].str());
    CHECK(ids.count((*it)[1].str()) == 1);
  }
  CHECK(rows == ids.size());
}

TEST_CASE("validate: a check's time is its own, measured, and a step's checks add up to the step", "[validate]") {
  std::vector<CheckResult> out;
  TimedStep(out, [&] {
    out.push_back({"a", CheckStatus::kPass, ""});
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    out.push_back({"b", CheckStatus::kPass, ""});
  });
  REQUIRE(out.size() == 2);
  CHECK(out[1].seconds >= 0.029);  // the 30 ms before it were b's, not shared evenly with a
  CHECK(out[0].seconds >= 0);
  const CheckRow* hooks = CheckRowOf("ts.hooks");
  REQUIRE(hooks);
  CHECK(hooks->blocks_loading);
  CHECK_FALSE(CheckRowOf("zip.crc")->blocks_loading);
  CHECK(CheckRowOf("nope") == nullptr);
}

namespace {
// A source that counts the bytes read from it.
class CountingSource : public ByteSource {
 public:
  CountingSource(std::unique_ptr<ByteSource> inner, uint64_t& read) : inner_(std::move(inner)), read_(read) {}
  uint64_t Size() const override { return inner_->Size(); }
  void Read(uint64_t pos, void* buf, size_t n) const override {
    read_ += n;
    inner_->Read(pos, buf, n);
  }
  const std::string& Name() const override { return inner_->Name(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  uint64_t& read_;
};
}  // namespace

TEST_CASE("validate: --skip of zip.crc and zip.sizes reads no record for them; a blocking check still runs", "[validate]") {
  const std::string bytes = test::Slurp(test::TestData("traced_cnn.pt"));
  auto bytes_read = [&](const std::vector<std::string>& skip) {
    uint64_t read = 0;
    ValidateOptions o = NoTorch();
    o.skip = skip;
    ArchiveReport r = ValidateSource(std::make_unique<CountingSource>(MakeMemorySource(bytes, "m.pt"), read), "m.pt", o);
    for (const char* id : {"zip.crc", "zip.sizes"}) {
      const bool skipped = std::find(skip.begin(), skip.end(), id) != skip.end();
      CHECK(StatusOf(r, id) == (skipped ? CheckStatus::kSkip : CheckStatus::kPass));
    }
    return read;
  };
  const uint64_t all = bytes_read({}), skipped = bytes_read({"zip.crc", "zip.sizes"});
  const uint64_t crc_skipped = bytes_read({"zip.crc"});
  INFO(all << " bytes read with every check, " << skipped << " with zip.crc and zip.sizes skipped, " << crc_skipped
           << " with zip.crc skipped");
  CHECK(skipped + bytes.size() / 2 < all);  // the tensor data (most of the file) is not streamed
  CHECK(crc_skipped + bytes.size() / 2 > all);  // zip.sizes reads the records zip.crc would have (one pass)

  // The rows run in order: a skipped row is not run and says SKIP in its
  // place; ts.pickle blocks loading, so it runs (what it finds keeps
  // LibTorch away) and ApplySkip labels it afterwards.
  const std::string path = test::TestData("traced_cnn.pt");
  Archive archive = Archive::Open(OpenFileSource(path));
  ValidateOptions o = NoTorch();
  o.skip = {"ts.version", "ts.pickle"};
  ArchiveReport report;
  CheckContext context(path, o, report);
  context.archive = &archive;
  RunRows(TorchScriptCheckRows(), context);
  std::vector<std::string> ids;
  for (const CheckResult& c : report.checks) ids.push_back(c.id);
  CHECK(ids == std::vector<std::string>{"ts.kind", "ts.layout", "ts.records", "ts.pickle", "ts.globals", "ts.storage",
                                        "ts.device", "ts.version", "ts.alignment", "ts.hooks"});
  CHECK(StatusOf(report, "ts.pickle") == CheckStatus::kPass);
  CHECK(StatusOf(report, "ts.version") == CheckStatus::kSkip);
  for (const CheckResult& c : report.checks) CHECK(c.seconds >= 0);

  // A .pt2 package is extracted to disk whole: with rows_block (its
  // ZipModel's rows_block_loading, when it is to be loaded) every row runs
  // when skipped, so that its FAIL keeps LibTorch away; pt2.aoti FAILs the
  // stub package's library. Without, the skipped row is not run.
  const std::string stub = test::TestData("pt2/cnn_aoti_stub.pt2");
  Archive package = Archive::OpenAny(OpenFileSource(stub));
  for (bool block : {false, true}) {
    ValidateOptions p = NoTorch();
    p.skip = {"pt2.aoti"};
    ArchiveReport r;
    CheckContext c(stub, p, r);
    c.archive = &package;
    c.rows_block = block;
    RunRows(Pt2CheckRows(), c);
    INFO("rows_block " << block);
    CHECK(StatusOf(r, "pt2.aoti") == (block ? CheckStatus::kFail : CheckStatus::kSkip));
    ApplySkip(p.skip, r.checks);
    CHECK(StatusOf(r, "pt2.aoti") == CheckStatus::kSkip);
  }
  // An exported program has no AOTInductor model for pt2.aoti to judge: run
  // because it blocks, it still says SKIP in its place (not appended after
  // the run's torch.load by ApplySkip).
  const std::string program = test::TestData("pt2/cnn.pt2");
  Archive exported = Archive::OpenAny(OpenFileSource(program));
  ValidateOptions p = NoTorch();
  p.skip = {"pt2.aoti"};
  ArchiveReport r;
  CheckContext c(program, p, r);
  c.archive = &exported;
  c.rows_block = true;
  RunRows(Pt2CheckRows(), c);
  std::vector<std::string> order;
  for (const CheckResult& x : r.checks) order.push_back(x.id);
  INFO(JoinAll(order));
  CHECK(order == std::vector<std::string>{"pt2.kind", "pt2.version", "pt2.program", "pt2.weights", "pt2.aoti"});
  CHECK(StatusOf(r, "pt2.aoti") == CheckStatus::kSkip);
}

TEST_CASE("validate: truncated at many offsets, always a finding, never a crash", "[validate]") {
  const std::string bytes = test::Slurp(test::TestData("scripted_multi.pt"));
  for (size_t n = 0; n < bytes.size(); n += 97) {
    ArchiveReport r = Check(bytes.substr(0, n));
    INFO("cut at " << n);
    CHECK(r.Count(CheckStatus::kFail) > 0);
  }
}

TEST_CASE("validate: flipped bytes in tensor data fail zip.crc", "[validate]") {
  const std::string bytes = test::Slurp(test::TestData("traced_cnn.pt"));
  auto src = MakeMemorySource(bytes);
  ZipLayout layout = ReadZipLayout(*src);
  std::mt19937 rng(7);
  int flips = 0;
  for (const auto& e : layout.entries) {
    if (e.name.find("/data/") == std::string::npos || e.compressed_size == 0) continue;
    std::string bad = bytes;
    size_t at = e.data_offset + rng() % e.compressed_size;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    ArchiveReport r = Check(bad);
    INFO(e.name << " byte " << at);
    CHECK(StatusOf(r, "zip.crc") == CheckStatus::kFail);
    ++flips;
  }
  CHECK(flips > 0);
}

TEST_CASE("validate: a flipped byte anywhere never crashes", "[validate]") {
  const std::string bytes = test::Slurp(test::TestData("with_extra.pt"));
  for (size_t at = 0; at < bytes.size(); at += 13) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0xff);
    ArchiveReport r = Check(bad);
    CHECK(!r.checks.empty());
  }
}

TEST_CASE("validate: path traversal, absolute names and duplicates", "[validate]") {
  auto recs = RecordsOf("traced_cnn.pt");
  auto with = [&](RawRecord extra) {
    auto all = recs;
    all.push_back(std::move(extra));
    return Check(MakeZip(all));
  };
  CHECK(StatusOf(with(Stored("../escape.txt", "x")), "zip.names") == CheckStatus::kFail);
  CHECK(StatusOf(with(Stored("/etc/cron.d/x", "x")), "zip.names") == CheckStatus::kFail);
  CHECK(StatusOf(with(Stored("traced_cnn/extra/a/../../../x", "x")), "zip.names") == CheckStatus::kFail);
  CHECK(StatusOf(with(Stored("traced_cnn/version", "3\n")), "zip.duplicates") == CheckStatus::kFail);
  CHECK(StatusOf(Check(MakeZip(recs)), "zip.names") == CheckStatus::kPass);
}

TEST_CASE("validate: a zip bomb in extra/ is found without inflating it", "[validate]") {
  // 64 MiB of zeros deflate to about 64 KiB; declare the real size.
  const size_t big = 64u << 20;
  std::string zeros(big, '\0');
  uLongf bound = compressBound(static_cast<uLong>(big));
  std::string z(bound, '\0');
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  zs.next_in = reinterpret_cast<Bytef*>(zeros.data());
  zs.avail_in = static_cast<uInt>(big);
  zs.next_out = reinterpret_cast<Bytef*>(z.data());
  zs.avail_out = static_cast<uInt>(bound);
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  z.resize(zs.total_out);
  deflateEnd(&zs);
  auto recs = RecordsOf("traced_cnn.pt");
  recs.push_back({"traced_cnn/extra/bomb.bin", z, 8, Crc32(zeros.data(), zeros.size()), big});
  ArchiveReport r = Check(MakeZip(recs));
  CHECK(StatusOf(r, "zip.bomb") == CheckStatus::kFail);
  CHECK(StatusOf(r, "zip.crc") == CheckStatus::kPass);  // the bomb was skipped, not inflated
}

TEST_CASE("validate: declared sizes that lie", "[validate]") {
  auto recs = RecordsOf("traced_cnn.pt");
  RawRecord liar = Stored("traced_cnn/extra/liar.txt", "hello");
  liar.declared = 4;  // stored 5 bytes, claims 4
  recs.push_back(liar);
  CHECK(StatusOf(Check(MakeZip(recs)), "zip.sizes") == CheckStatus::kFail);
}

TEST_CASE("validate: missing records and storages", "[validate]") {
  auto recs = RecordsOf("traced_cnn.pt");
  std::vector<RawRecord> no_storage;
  for (const auto& r : recs) {
    if (r.name != "traced_cnn/data/0") no_storage.push_back(r);
  }
  CHECK(StatusOf(Check(MakeZip(no_storage)), "ts.records") == CheckStatus::kFail);
}

TEST_CASE("validate: non-archives get a verdict", "[validate]") {
  for (const char* f : {"bad/empty.pt", "bad/not_zip.pt", "bad/python_source.ptl", "bad/checkpoint.pth", "bad/missing_data_pkl.pt"}) {
    INFO(f);
    ArchiveReport r = Check(test::Slurp(test::TestData(f)));
    CHECK(r.Count(CheckStatus::kFail) > 0);
  }
}

TEST_CASE("validate: operator allow lists", "[validate]") {
  std::vector<std::string> allowed = {"aten::add", "aten::linear.out"};
  CHECK(OperatorAllowed("aten::add.Tensor", allowed));
  CHECK(OperatorAllowed("aten::add", allowed));
  CHECK(OperatorAllowed("aten::linear.out", allowed));
  CHECK_FALSE(OperatorAllowed("aten::linear", allowed));
  CHECK_FALSE(OperatorAllowed("aten::addmm", allowed));
}

TEST_CASE("validate: reports in JSON and JUnit agree with the checks", "[validate]") {
  ValidationReport report;
  report.archives.push_back(Check(test::Slurp(test::TestData("bad/crc_mismatch.pt")), "crc.pt"));
  nlohmann::json j = ToJson(report);
  CHECK(j["schema_version"] == kValidateSchemaVersion);
  CHECK(j["passed"] == false);
  CHECK(j["archives"][0]["findings"].size() == static_cast<size_t>(report.archives[0].Count(CheckStatus::kFail)));
  std::string xml = RenderJUnit(report);
  CHECK(xml.find("<failure") != std::string::npos);
  CHECK(xml.find("name=\"zip.crc\"") != std::string::npos);
}

TEST_CASE("validate: --skip reports a check as SKIP, never PASS or FAIL", "[validate]") {
  const std::string bytes = test::Slurp(test::TestData("bad/crc_mismatch.pt"));
  ValidateOptions o = NoTorch();
  o.skip = {"zip.crc", "ts.alignment", "torch.reference"};
  ArchiveReport r = ValidateSource(MakeMemorySource(bytes, "crc.pt"), "crc.pt", o);
  int seen = 0;
  for (const CheckResult& c : r.checks) {
    if (c.id == "zip.crc" || c.id == "ts.alignment" || c.id == "torch.reference") {
      ++seen;
      CHECK(c.status == CheckStatus::kSkip);
      CHECK(c.message == "skipped by --skip");
    }
  }
  CHECK(seen == 3);  // torch.reference would not have run (no LibTorch): still reported, once
  CHECK(r.Count(CheckStatus::kFail) == 0);
  ValidationReport report;
  report.archives.push_back(r);
  CHECK(report.Passed());
  CHECK(RenderJUnit(report).find("<skipped message=\"skipped by --skip\"") != std::string::npos);
  CHECK(ToJson(report)["archives"][0]["checks"].dump().find("\"skipped by --skip\"") != std::string::npos);
}

TEST_CASE("validate: --skip names must be check ids", "[validate]") {
  for (const std::string& id : CheckIds()) CHECK_NOTHROW(RequireCheckId(id, "--skip"));
  try {
    RequireCheckId("torch.rnu", "--skip");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    const std::string what = e.what();
    CHECK(what.find("--skip: 'torch.rnu' is not a check") == 0);
    CHECK(what.find("torch.run") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("validate: JUnit has time attributes that add up", "[validate]") {
  ValidationReport report;
  report.archives.push_back(Check(test::Slurp(test::TestData("with_extra.pt")), "a.pt"));
  const ArchiveReport& a = report.archives[0];
  double sum = 0;
  for (const CheckResult& c : a.checks) {
    CHECK(c.seconds >= 0);
    sum += c.seconds;
  }
  CHECK(a.seconds > 0);
  CHECK(sum <= a.seconds + 1e-9);
  const std::string xml = RenderJUnit(report);
  size_t testcases = 0;
  for (size_t at = xml.find("<testcase "); at != std::string::npos; at = xml.find("<testcase ", at + 1)) {
    const size_t end = xml.find('>', at);
    CHECK(xml.substr(at, end - at).find(" time=\"") != std::string::npos);
    ++testcases;
  }
  CHECK(testcases == a.checks.size());
  CHECK(xml.find("<testsuite name=\"a.pt\"") != std::string::npos);
  const size_t suite = xml.find("<testsuite ");
  CHECK(xml.substr(suite, xml.find('>', suite) - suite).find(" time=\"") != std::string::npos);
  const size_t suites = xml.find("<testsuites ");
  CHECK(xml.substr(suites, xml.find('>', suites) - suites).find(" time=\"") != std::string::npos);
}

TEST_CASE("validate: JSON gives dtype and shape beside display strings", "[validate]") {
  ValidationReport report;
  ArchiveReport a;
  a.path = "m.pt";
  Json(a.details) = {{"model",
                {{"outputs",
                  {{{"name", "output"},
                    {"desc", "Float[1, 6]"},
                    {"tensor", {{"dtype", "float32"}, {"shape", {1, 6}}, {"device", "cpu"}}}},
                   {{"name", "output[1]"}, {"desc", "int 7"}, {"tensor", nullptr}}}},
                 {"input_args", {{{"name", "x"}, {"value", "1x3x8x8:float32"}}, {{"name", "n"}, {"value", "3"}}}}}}};
  report.archives.push_back(a);
  nlohmann::json model = ToJson(report)["archives"][0]["details"]["model"];
  CHECK(model["outputs"][0]["dtype"] == "float32");
  CHECK(model["outputs"][0]["shape"] == nlohmann::json::array({1, 6}));
  CHECK(model["outputs"][0]["desc"] == "Float[1, 6]");
  CHECK_FALSE(model["outputs"][0].contains("tensor"));  // the child's typed description, not repeated
  CHECK(model["outputs"][1]["dtype"].is_null());
  CHECK(model["outputs"][1]["shape"].is_null());
  CHECK(model["input_args"][0]["dtype"] == "float32");
  CHECK(model["input_args"][0]["shape"] == nlohmann::json::array({1, 3, 8, 8}));
  CHECK(model["input_args"][1]["dtype"].is_null());  // an int argument, not a 1-D shape
}

TEST_CASE("tensor types of arguments from their input specs", "[validate]") {
  auto t = SpecTensor("1x3x224x224:float16:channels_last");
  REQUIRE(t);
  CHECK(t->dtype == "float16");
  CHECK(t->shape == std::vector<int64_t>{1, 3, 224, 224});
  CHECK(SpecTensor("scalar:int64")->shape.empty());
  CHECK(SpecTensor("2x3")->dtype == "float32");
  for (const char* no : {"3", "int 7", "Tensor", "Float[1, 6]", "", "x=1x2", "[1, 2]", "true"}) CHECK_FALSE(SpecTensor(no));
}
