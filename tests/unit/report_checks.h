// Checks every report page's tests share (report_test.cc, report_diff_test.cc,
// report_pte_diff_test.cc, report_run_test.cc).
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "test_util.h"

namespace tsctl::test {

// The page's offline frame: the CSP that allows nothing from outside, no
// address fetched, no src= attribute, and one script (tsctl's).
inline void RequireOfflineFrame(const std::string& page) {
  CHECK(page.find("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:") !=
        std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("src=\"") == std::string::npos);
  CHECK(Count(page, "<script>") == 1);
}

// A diff page (report A B): every section once by id, each linked from the
// navigation, in the offline frame.
inline void RequireDiffSections(const std::string& page) {
  for (const char* id : {"summary", "format", "records", "sizes", "modules", "parameters", "constants", "code",
                         "operators", "extra"}) {
    CHECK(Count(page, std::string("<section id=\"") + id + "\"") == 1);
    CHECK(Count(page, std::string("<a href=\"#") + id + "\">") >= 1);
  }
  RequireOfflineFrame(page);
}

}  // namespace tsctl::test
