#include <catch2/catch.hpp>

#include "../../lib/src/plugin/format_support.h"
#include "test_util.h"
#include "plugin_abi.h"
#include "tsctl/validate.h"

using namespace tsctl;

TEST_CASE("the format-version table picks the newest release not newer than the LibTorch", "[format_versions]") {
  FormatVersionRange r = TableFormatVersions("1.13.1");
  CHECK(r.libtorch == "1.13");
  CHECK(r.min == 1);
  CHECK(r.max == 10);
  CHECK_FALSE(r.from_plugin);
  CHECK(TableFormatVersions("2.15.0+cu130").libtorch == "2.15");
  CHECK(TableFormatVersions("2.12.1").libtorch == "1.13");  // between rows: the older
  CHECK(TableFormatVersions("3.0.0").libtorch == "2.15");   // newer than every row: the newest
  CHECK(TableFormatVersions("1.4.0").libtorch == "1.13");   // older than every row: the oldest
  CHECK(TableFormatVersions("").libtorch == "2.15");        // no LibTorch: the newest
  CHECK(TableFormatVersions("garbage").libtorch == "2.15");
}

TEST_CASE("without a loaded plugin the range comes from the table and validate says so", "[format_versions]") {
  // The unit tests never load the LibTorch plugin.
  REQUIRE(LoadedTorchBackend() == nullptr);
  FormatVersionRange r = SupportedFormatVersions();
  CHECK_FALSE(r.from_plugin);
  CHECK(r.max >= 10);
  ValidateOptions options;
  options.load = false;
  ArchiveReport report = ValidateArchive(test::TestData("traced_cnn.pt"), options);
  bool found = false;
  for (const CheckResult& c : report.checks) {
    if (c.id != "ts.version") continue;
    found = true;
    CHECK(c.status == CheckStatus::kPass);
    CHECK(c.message == "format version 3 (LibTorch reads 1 to 10, by tsctl's table)");
  }
  CHECK(found);
}
