// Hostile input: pickles that nest, share or refer to themselves, foreign
// globals, lying storages, names that are not text. Inputs are built in
// memory or taken from tests/fuzz/regression/hostile (copies of
// ../shared/hostile).
#include <catch2/catch.hpp>

#include <pugixml.hpp>

#include <sstream>

#include "../../lib/src/render/render_json.h"
#include "test_util.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/inspect.h"
#include "tsctl/pickle.h"
#include "tsctl/validate.h"

using namespace tsctl;

namespace {

// Bytes of a literal that may hold NULs.
template <size_t N>
std::string B(const char (&s)[N]) {
  return std::string(s, N - 1);
}

std::string Hostile(const std::string& name) {
  return test::Slurp(test::TestData("../tests/fuzz/regression/hostile/" + name));
}

ArchiveReport NoLoad(const std::string& bytes) {
  ValidateOptions o;
  o.load = false;
  return ValidateSource(MakeMemorySource(bytes, "<memory>"), "<memory>", o);
}

const CheckResult* Find(const ArchiveReport& r, const std::string& id) {
  for (const auto& c : r.checks) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::string ErrorOf(const std::string& pickle) {
  try {
    ParsePickle(pickle);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("hostile pickle: nesting a million deep is one error, not a stack overflow", "[hostile]") {
  const size_t n = 1'000'000;
  std::string nested = "\x80\x02" + std::string(n, '(') + std::string(n, 'l') + ".";
  CHECK_THAT(ErrorOf(nested), Catch::Contains("nested deeper than 1000 levels"));
  // The same without STOP: the parser fails with the deep tree on its stack.
  CHECK_THAT(ErrorOf(nested.substr(0, nested.size() - 1)), Catch::Contains("without a STOP"));
  // Within the limit, it parses.
  std::string ok = "\x80\x02" + std::string(900, '(') + std::string(900, 'l') + ".";
  CHECK(ParsePickle(ok)->kind == PyKind::kList);
}

TEST_CASE("hostile pickle: memo sharing that expands exponentially is refused", "[hostile]") {
  // x = []; 60 times: x = (x, x)
  std::string dag = B("\x80\x02]q\x00");
  for (int i = 0; i < 60; ++i) dag += B("h\x00h\x00\x86q\x00");
  dag += ".";
  CHECK_THAT(ErrorOf(dag), Catch::Contains("expand to more than"));
  // A little sharing is fine: 10 levels are 2047 values.
  std::string small = B("\x80\x02]q\x00");
  for (int i = 0; i < 10; ++i) small += B("h\x00h\x00\x86q\x00");
  small += ".";
  CHECK(ParsePickle(small)->expanded == 2047);
}

TEST_CASE("hostile pickle: a value that contains itself is refused", "[hostile]") {
  CHECK_THAT(ErrorOf(B("\x80\x02]q\x00h\x00\x61.")), Catch::Contains("refers to itself"));   // l.append(l)
  CHECK_THAT(ErrorOf(B("\x80\x02}q\x00K\x01h\x00s.")), Catch::Contains("refers to itself"));  // d[1] = d
  // A cycle that the result does not reach is dropped without a leak (ASan checks).
  CHECK(ParsePickle(B("\x80\x02]q\x00h\x00\x61" "0N."))->kind == PyKind::kNone);
}

TEST_CASE("hostile pickle: globals are reported, also unreachable ones", "[hostile]") {
  PickleFacts facts;
  // os.system('ls'), then POP, then None: Python would still run it.
  ParsePickle(B("\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00ls\x85R0N."), {}, &facts);
  REQUIRE(facts.globals.size() == 1);
  CHECK(facts.globals[0] == "os.system");
  CHECK_FALSE(IsTorchScriptGlobal("os", "system"));
  CHECK_FALSE(IsTorchScriptGlobal("builtins", "eval"));
  CHECK_FALSE(IsTorchScriptGlobal("torch", "load"));
  CHECK_FALSE(IsTorchScriptGlobal("torch._utils", "_rebuild_device_tensor_from_numpy"));
  CHECK(IsTorchScriptGlobal("torch._utils", "_rebuild_tensor_v2"));
  CHECK(IsTorchScriptGlobal("torch", "FloatStorage"));
  CHECK(IsTorchScriptGlobal("collections", "OrderedDict"));
  CHECK(IsTorchScriptGlobal("__torch__.torch.nn.modules.linear", "Linear"));
  CHECK(IsTorchScriptGlobal("torch.jit._pickle", "build_intlist"));
}

TEST_CASE("hostile validate: every testdata archive names only TorchScript globals and sound storages", "[hostile]") {
  for (const char* f : {"traced_cnn.pt", "scripted_multi.pt", "quantized.pt", "quantized_static.pt", "branchy.pt",
                        "with_extra.pt", "mobile.ptl", "renamed_root.pt", "unaligned.pt"}) {
    ArchiveReport r = NoLoad(test::Slurp(test::TestData(f)));
    INFO(f);
    REQUIRE(Find(r, "ts.globals"));
    CHECK(Find(r, "ts.globals")->status == CheckStatus::kPass);
    CHECK(Find(r, "ts.storage")->status == CheckStatus::kPass);
  }
}

TEST_CASE("hostile validate: os.system in data.pkl fails ts.globals", "[hostile]") {
  for (const char* f : {"11_pickle_global_accepted/r_os_system_0.pt", "11_pickle_global_accepted/r_os_system_attr_0.pt"}) {
    ArchiveReport r = NoLoad(Hostile(f));
    INFO(f);
    REQUIRE(Find(r, "ts.globals"));
    CHECK(Find(r, "ts.globals")->status == CheckStatus::kFail);
    CHECK_THAT(Find(r, "ts.globals")->message, Catch::Contains("data.pkl: os.system"));
  }
}

TEST_CASE("hostile validate: storage offsets and sizes past the record fail ts.storage", "[hostile]") {
  for (const char* f : {"06_oob_storage_offset_graph_frozen_segv/huge_offset.pt",
                        "06_oob_storage_offset_graph_frozen_segv/short_storage.pt"}) {
    ArchiveReport r = NoLoad(Hostile(f));
    INFO(f);
    REQUIRE(Find(r, "ts.storage"));
    CHECK(Find(r, "ts.storage")->status == CheckStatus::kFail);
  }
}

TEST_CASE("hostile validate: deep and shared pickles fail ts.pickle", "[hostile]") {
  for (const char* f : {"02_stack_overflow_deep_pickle/nested_list_1M_data_pkl.pt",
                        "02_stack_overflow_deep_pickle/nested_tuple_300k_data_pkl.pt",
                        "02_stack_overflow_deep_pickle/nested_list_300k_constants_pkl.pt",
                        "03_hang_memo_shared_refs/dag_lists_30.pt", "03_hang_memo_shared_refs/dag_modules_22.pt"}) {
    ArchiveReport r = NoLoad(Hostile(f));
    INFO(f);
    REQUIRE(Find(r, "ts.pickle"));
    CHECK(Find(r, "ts.pickle")->status == CheckStatus::kFail);
  }
}

TEST_CASE("hostile output: names that are not UTF-8 give valid JSON and XML", "[hostile]") {
  for (const char* f : {"01_json_invalid_utf8/r_badutf8_attr_0.pt", "01_json_invalid_utf8/r_badutf8_storage_key_0.pt",
                        "01_json_invalid_utf8/any_flip_10.pt", "09_junit_control_chars/ctrl_traversal.pt",
                        "13_stamp_show_json_invalid_utf8/m_5309.pt"}) {
    INFO(f);
    ValidationReport report;
    report.archives.push_back(NoLoad(Hostile(f)));
    std::string json;
    REQUIRE_NOTHROW(json = ToJson(report).dump());
    CHECK(nlohmann::json::accept(json));
    pugi::xml_document doc;
    CHECK(doc.load_string(RenderJUnit(report).c_str()));
    try {
      ArchiveInfo info = Inspect(Archive::Open(MakeMemorySource(Hostile(f))));
      CHECK(nlohmann::json::accept(ToJson(info).dump()));
      std::ostringstream text;
      RenderText(info, text);
      for (unsigned char c : text.str()) CHECK((c >= 0x20 || c == '\n'));
    } catch (const Error&) {
    }
  }
}

TEST_CASE("hostile zip: 60 000 entries and 5 000 overlapping copies open and inspect", "[hostile]") {
  Archive a = Archive::Open(MakeMemorySource(Hostile("04_slow_many_cd_entries_and_overlap_bomb/r_dup_cd_60000.pt")));
  CHECK(a.layout().entries.size() == 60004);
  CHECK(a.Find("data.pkl") != nullptr);
  ArchiveInfo info = Inspect(a);
  CHECK(info.records.size() == 60004);
  ArchiveReport r = NoLoad(Hostile("04_slow_many_cd_entries_and_overlap_bomb/r_dup_bomb_5000.pt"));
  CHECK(Find(r, "zip.duplicates")->status == CheckStatus::kFail);
  CHECK_THAT(Find(r, "zip.crc")->message, Catch::Contains("not read"));
}
