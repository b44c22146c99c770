// The journal of stamp is data in the file: trusted only when the file
// proves it (hostile corpus, folder 16).
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "test_util.h"
#include "tsctl/archive.h"
#include "tsctl/stamp.h"

using namespace tsctl;

TEST_CASE("stamp journal: a forged one on a consistent archive is left alone and reported", "[stamp][hostile]") {
  const std::string forged = test::Slurp(test::TestData("../tests/fuzz/regression/hostile/16_forged_stamp_journal/forged_journal.pt"));
  REQUIRE(!forged.empty());
  char tmpl[] = "/tmp/tsctl-journal-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string path = dir + "/f.pt";
  std::ofstream(path, std::ios::binary) << forged;

  {
    Archive before = Archive::Open(OpenFileSource(path));
    CHECK(before.Ambiguities().empty());
    const std::optional<std::string> said = DescribeStampJournal(before);
    REQUIRE(said.has_value());
    CHECK(said->find("nothing proves an interrupted stamp") != std::string::npos);
    CHECK(before.Read("code/__torch__.py").find("torch.relu") != std::string::npos);
  }
  StampOptions options;
  options.auto_fields = false;
  options.set = {{"a", "1"}};
  StampResult r = Stamp(path, options);
  CHECK_FALSE(r.repaired);
  // Still the benign model every reader saw, now stamped.
  Archive after = Archive::Open(OpenFileSource(path));
  CHECK(after.Read("code/__torch__.py").find("torch.relu") != std::string::npos);
  CHECK(after.Read("extra/producer_info.json").find("\"a\": 1") != std::string::npos);
  CHECK(after.Ambiguities().empty());
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}
