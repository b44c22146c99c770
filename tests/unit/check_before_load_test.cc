// CheckBeforeLoad (lib/src/commands/check_before_load.h): validate's static
// checks before any command gives an archive to LibTorch; archives read from
// memory, nothing loaded.
#include <catch2/catch.hpp>

#include "../../lib/src/commands/check_before_load.h"
#include "test_util.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/source.h"

using namespace tsctl;

namespace {

Archive FromTestData(const std::string& name) {
  return Archive::OpenModel(MakeMemorySource(test::Slurp(test::TestData(name)), name));
}

}  // namespace

TEST_CASE("CheckBeforeLoad: an honest archive may be loaded", "[check_before_load]") {
  for (const char* name : {"traced_cnn.pt", "scripted_multi.pt", "quantized.pt", "mobile.ptl"}) {
    INFO(name);
    CHECK_FALSE(CheckBeforeLoad(FromTestData(name), name, false).has_value());
  }
}

TEST_CASE("CheckBeforeLoad: a load-time hook is refused unless allowed, by ts.hooks alone", "[check_before_load]") {
  const Archive a = FromTestData("hooks/setstate_reads_file.pt");
  const std::optional<LoadRefusal> refused = CheckBeforeLoad(a, "setstate_reads_file.pt", false);
  REQUIRE(refused.has_value());
  REQUIRE(refused->failed.size() == 1);
  CHECK(refused->failed[0].id == "ts.hooks");
  CHECK(refused->message.rfind("LibTorch is not given an archive that fails ts.hooks: ", 0) == 0);
  CHECK(refused->message.find("__setstate__") != std::string::npos);
  CHECK_FALSE(CheckBeforeLoad(a, "setstate_reads_file.pt", true).has_value());
  try {
    RequireLoadable(a, "setstate_reads_file.pt", false);
    FAIL("not refused");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kRefused);
    CHECK(ExitCodeFor(e.kind()) == kExitFindings);
  }
}

TEST_CASE("CheckBeforeLoad: structural failures are refused even with allow_load_hooks", "[check_before_load]") {
  const struct {
    const char* file;
    const char* check;
  } cases[] = {{"bad/oob_storage_offset.pt", "ts.storage"},
               {"bad/deep_constants.pt", "ts.pickle"},
               {"bad/crc_mismatch.pt", "zip.crc"},
               {"bad/path_traversal.pt", "zip.names"}};
  for (const auto& c : cases) {
    INFO(c.file);
    const std::optional<LoadRefusal> refused = CheckBeforeLoad(FromTestData(c.file), c.file, true);
    REQUIRE(refused.has_value());
    CHECK(refused->message.find(c.check) != std::string::npos);
  }
}

TEST_CASE("RefusesLoad: FAILs of zip.*, ts.* and pt2.* (pt2.ops aside), nothing else", "[check_before_load]") {
  // Every static row of the ZIP formats refuses, but those that judge the user's lists.
  for (const char* id : {"zip.structure", "zip.names", "zip.bomb", "zip.sizes", "ts.kind", "ts.records", "ts.storage",
                         "ts.version", "ts.mobile", "pt2.kind", "pt2.weights", "pt2.aoti"}) {
    INFO(id);
    CHECK(RefusesLoad({id, CheckStatus::kFail, ""}));
  }
  for (const char* id : {"code.ops", "pte.format", "ts.bytecode", "torch.load"}) {
    INFO(id);
    CHECK_FALSE(RefusesLoad({id, CheckStatus::kFail, ""}));
  }
  CHECK(RefusesLoad({"ts.hooks", CheckStatus::kFail, ""}));
  CHECK(RefusesLoad({"zip.crc", CheckStatus::kFail, ""}));
  CHECK(RefusesLoad({"pt2.program", CheckStatus::kFail, ""}));
  CHECK_FALSE(RefusesLoad({"pt2.ops", CheckStatus::kFail, ""}));
  CHECK_FALSE(RefusesLoad({"ts.hooks", CheckStatus::kWarn, ""}));
  CHECK_FALSE(RefusesLoad({"torch.run", CheckStatus::kFail, ""}));
  CHECK_FALSE(RefusesLoad({"meta.producer", CheckStatus::kFail, ""}));
}
