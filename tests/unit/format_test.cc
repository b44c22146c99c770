// tsctl/format.h: a file's format is recognised once, by its content (its
// name only as the tiebreak for a file that does not say), and validate's
// table of checks is the container's, each format's own and the run's.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_util.h"
#include "tsctl/error.h"
#include "tsctl/format.h"
#include "tsctl/validate.h"
#include "../../lib/src/commands/zip_model.h"

using namespace tsctl;
using tsctl::test::TestData;

namespace {

// `from` copied to a temporary file named `name` (removed at scope end).
struct Copy {
  std::string path;
  Copy(const std::string& from, const std::string& name) {
    path = (std::filesystem::temp_directory_path() / ("tsctl_format_test_" + std::to_string(::getpid()) + "_" + name)).string();
    std::filesystem::copy_file(from, path, std::filesystem::copy_options::overwrite_existing);
  }
  ~Copy() { std::filesystem::remove(path); }
};

std::string Name(const std::string& path) { return Open(path).format->name; }

}  // namespace

TEST_CASE("format: each format is recognised by its content, whatever the file is called") {
  CHECK(Name(TestData("traced_cnn.pt")) == std::string("torchscript"));
  CHECK(Name(TestData("mobile.ptl")) == std::string("torchscript"));
  CHECK(Name(TestData("pt2/cnn.pt2")) == std::string("pt2"));
  CHECK(Name(TestData("pte/linear.pte")) == std::string("executorch"));
  CHECK(Name(TestData("pte/linear.bpte")) == std::string("executorch"));
  CHECK(Name(TestData("pte/linear_external.ptd")) == std::string("executorch"));
  // Renamed: the bytes decide.
  Copy pte_as_pt(TestData("pte/linear.pte"), "program.pt");
  CHECK(Name(pte_as_pt.path) == std::string("executorch"));
  Copy pt2_as_pt(TestData("pt2/cnn.pt2"), "exported.pt");
  CHECK(Name(pt2_as_pt.path) == std::string("pt2"));
  // A ZIP named .pte stays a ZIP format (the name is no tiebreak for a ZIP).
  Copy ts_as_pte(TestData("traced_cnn.pt"), "model.pte");
  CHECK(Name(ts_as_pte.path) == std::string("torchscript"));
}

TEST_CASE("format: a file whose bytes say nothing is its name's format, and that reader says what it starts with") {
  const std::string path = (std::filesystem::temp_directory_path() / ("tsctl_format_test_" + std::to_string(::getpid()) + "_x.pte")).string();
  { std::ofstream(path, std::ios::binary) << "not a program"; }
  const Format* f = FormatOfFile(path);
  REQUIRE(f != nullptr);
  CHECK(f->name == std::string("executorch"));
  const OpenedFile file = Open(path);
  CHECK_THROWS_AS(file.format->inspect(file, {}), Error);
  std::filesystem::remove(path);
  // Named like nothing: no format claims it before the ZIP reader, which refuses it in one line.
  CHECK(FormatOfFile(TestData("bad/not_zip.pt")) == nullptr);
  CHECK_THROWS_AS(Open(TestData("bad/not_zip.pt")), Error);
  CHECK(FormatOfFile("-") == nullptr);  // a stream is never read twice
}

TEST_CASE("format: a pair with an ExecuTorch side is compared by ExecuTorch's reader, two ZIPs by DiffOpened") {
  DiffRequest r;
  r.a = TestData("pte/linear.pte");
  r.b = TestData("traced_cnn.pt");
  REQUIRE(PairReader(r) != nullptr);
  CHECK(PairReader(r)->name == std::string("executorch"));
  CHECK_THROWS_AS(PairReader(r)->diff_pair(r), Error);  // the .pt gets the reader's line
  r.a = TestData("pt2/cnn.pt2");
  CHECK(PairReader(r) == nullptr);
  const OpenedFile a = Open(r.a), b = Open(r.b);
  CHECK_FALSE(DiffOpened(a, b, {}).Equal());
  CHECK(DiffOpened(a, a, {}).Equal());
}

TEST_CASE("format: validate's table is the ZIP container's rows, each format's own in Formats() order, then the run's") {
  const std::vector<CheckRow>& table = CheckTable();
  REQUIRE(!table.empty());
  CHECK(table.front().id == std::string("zip.structure"));
  CHECK(table.back().id == std::string("torch.intermediates"));
  size_t at = 0;
  while (at < table.size() && std::string(table[at].id).rfind("zip.", 0) == 0) ++at;
  for (const Format* f : Formats()) {
    CHECK(!f->checks.empty());
    for (const CheckRow& row : f->checks) {
      REQUIRE(at < table.size());
      const CheckRow* first = CheckRowOf(row.id);
      REQUIRE(first);
      if (first < &table[at]) {
        // An id an earlier format reports too (code.ops): one row of the
        // table, which this format's agrees with.
        INFO(f->name << " reports " << row.id << " too");
        CHECK(first->blocks_loading == row.blocks_loading);
        CHECK(first->stage == row.stage);
        continue;
      }
      CHECK(table[at].id == std::string(row.id));
      CHECK(first == &table[at]);
      ++at;
    }
  }
  CHECK(std::string(table[at].id).rfind("torch.", 0) == 0);
  // Each id is one row of the table.
  for (size_t i = 0; i < table.size(); ++i) {
    for (size_t j = i + 1; j < table.size(); ++j) CHECK(std::string(table[i].id) != table[j].id);
  }
  // A ZIP format's rows are the ones every command runs before LibTorch loads.
  for (const Format* f : Formats()) {
    if (!f->zip) continue;
    REQUIRE(f->zip->checks().size() == f->checks.size());
    for (size_t i = 0; i < f->checks.size(); ++i) CHECK(f->zip->checks()[i].id == f->checks[i].id);
  }
}

TEST_CASE("format: every static row has its check; a runtime's rows are its run's") {
  // A row without a function is one a model's run yields: a load, method or
  // run stage, or one judged from a run's outputs.
  for (const CheckRow& row : CheckTable()) {
    INFO(row.id);
    const std::string id = row.id;
    const bool of_a_run = id.rfind("torch.", 0) == 0 || id == "ts.bytecode" || row.stage != CheckRow::Stage::kNone ||
                          id == "pte.finite" || id == "pte.deterministic" || id == "pte.case" || id == "pte.reference";
    CHECK((row.check == nullptr) == of_a_run);
  }
}

TEST_CASE("format: a ZIP is its format's by the ZIP row that claims it, and every ZIP format row names one") {
  for (const char* name : {"traced_cnn.pt", "mobile.ptl", "scripted_multi.pt", "pt2/cnn.pt2", "pt2/cnn_aoti_stub.pt2",
                           "pt2/transformer.pt2"}) {
    INFO(name);
    const OpenedFile file = Open(TestData(name));
    REQUIRE(file.archive);
    REQUIRE(file.format->zip);
    CHECK(&ZipModelOf(*file.archive) == file.format->zip);
    CHECK(std::string(file.format->zip->name) == file.format->name);
  }
  // Every ZIP row is some format's, and the last claims what no other does.
  for (const ZipModel* m : ZipModels()) {
    bool named = false;
    for (const Format* f : Formats()) named |= f->zip == m;
    CHECK(named);
  }
  CHECK(ZipModels().back()->claims(*Open(TestData("traced_cnn.pt")).archive));
  // What differs between them is the row's: migrate refuses a .pt2 only.
  CHECK(std::string(ZipModelOf(*Open(TestData("pt2/cnn.pt2")).archive).migrate_refusal) != "");
  CHECK(std::string(ZipModelOf(*Open(TestData("traced_cnn.pt")).archive).migrate_refusal) == "");
}

TEST_CASE("format: each runtime's load and run are rows of the table (what --skip of them leaves out, what NOT RUN reads)") {
  std::vector<std::string> loads, runs;
  for (const CheckRow& r : CheckTable()) {
    if (r.stage == CheckRow::Stage::kLoad) loads.push_back(r.id);
    if (r.stage == CheckRow::Stage::kRun) runs.push_back(r.id);
  }
  // LibTorch's (the ZIP formats') and ExecuTorch's.
  CHECK(loads == std::vector<std::string>{"pte.load", "torch.load"});
  CHECK(runs == std::vector<std::string>{"pte.run", "torch.run"});
}
