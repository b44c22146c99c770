// JSON from users and archives: one parser, a depth limit, precise messages.
#include <catch2/catch.hpp>

#include <string>

#include "../../lib/src/text/json_util.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "../../lib/src/archive/json_input.h"

using namespace tsctl;

namespace {

std::string Nested(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

std::string Problem(const std::string& text) {
  try {
    ParseJsonInput(text, "--meta", ErrorKind::kUsage);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("json input: each problem gets its own message", "[json]") {
  CHECK(Problem("{\"a\": 1}").empty());
  CHECK(Problem("{\"a\": \xff}") == "--meta: not valid UTF-8 (byte 6)");
  CHECK(Problem("{\"a\": tru}").rfind("--meta: invalid JSON: parse error at line 1, column 10", 0) == 0);
  CHECK(Problem("[\"\\ud800\"]").rfind("--meta: invalid JSON: ", 0) == 0);  // a lone surrogate
  CHECK(Problem("NaN").rfind("--meta: invalid JSON: ", 0) == 0);
  CHECK(Problem(Nested(600)) == "--meta: nests deeper than 512 levels (byte 512)");
}

TEST_CASE("json input: the limit is exact, and nothing read is cut when printed", "[json]") {
  CHECK(AcceptJsonInput(Nested(kMaxJsonDepth)));
  CHECK_FALSE(AcceptJsonInput(Nested(kMaxJsonDepth + 1)));
  nlohmann::json j = ParseJsonInput(Nested(kMaxJsonDepth), "x");
  nlohmann::json wrapped = {{"report", {{"value", j}}}};
  CHECK(DumpJson(wrapped).find(Nested(kMaxJsonDepth)) != std::string::npos);
}

TEST_CASE("json input: a million levels is one message, not a stack overflow", "[json][hostile]") {
  const std::string deep = std::string(1000000, '{') ;
  CHECK(JsonInputProblem(deep) == "nests deeper than 512 levels (byte 512)");
  CHECK(JsonInputProblem(std::string(100000, '[') + std::string(100000, ']')).find("512 levels") != std::string::npos);
}
