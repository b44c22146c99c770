#include <catch2/catch.hpp>

#include "tsctl/error.h"
#include "tsctl/pickle.h"

using namespace tsctl;

TEST_CASE("pickle: scalars, containers and memo", "[pickle]") {
  // pickle.dumps({'a': [1, 2.5, None, True], 'b': ('x', b'yz')}, protocol=2)
  const std::string bytes = std::string("\x80" "\x02" "}q" "\x00" "(X" "\x01" "\x00" "\x00" "\x00" "aq" "\x01" "]q" "\x02" "(K" "\x01" "G@" "\x04" "\x00" "\x00" "\x00" "\x00" "\x00" "\x00" "N" "\x88" "eX" "\x01" "\x00" "\x00" "\x00" "bq" "\x03" "X" "\x01" "\x00" "\x00" "\x00" "xq" "\x04" "c_codecs" "\x0a" "encode" "\x0a" "q" "\x05" "X" "\x02" "\x00" "\x00" "\x00" "yzq" "\x06" "X" "\x06" "\x00" "\x00" "\x00" "latin1q" "\x07" "\x86" "q" "\x08" "Rq" "\x09" "\x86" "q" "\x0a" "u.", 99);
  PyRef v = ParsePickle(bytes);
  REQUIRE(v->kind == PyKind::kDict);
  PyRef a = v->Get("a");
  REQUIRE(a);
  REQUIRE(a->kind == PyKind::kList);
  REQUIRE(a->items.size() == 4);
  CHECK(a->items[0]->integer == 1);
  CHECK(a->items[1]->real == 2.5);
  CHECK(a->items[2]->kind == PyKind::kNone);
  CHECK(a->items[3]->boolean);
  PyRef b = v->Get("b");
  REQUIRE(b->kind == PyKind::kTuple);
  CHECK(b->items[1]->IsGlobal("_codecs", "encode"));
  CHECK(Repr(a) == "[1, 2.5, None, True]");
}

TEST_CASE("pickle: negative and long integers", "[pickle]") {
  // pickle.dumps([-1, -300, 2**40, -2**63], protocol=2)
  const std::string bytes = std::string("\x80" "\x02" "]q" "\x00" "(J" "\xff" "\xff" "\xff" "\xff" "J" "\xd4" "\xfe" "\xff" "\xff" "\x8a" "\x06" "\x00" "\x00" "\x00" "\x00" "\x00" "\x01" "\x8a" "\x08" "\x00" "\x00" "\x00" "\x00" "\x00" "\x00" "\x00" "\x80" "e.", 36);
  PyRef v = ParsePickle(bytes);
  REQUIRE(v->items.size() == 4);
  CHECK(v->items[0]->integer == -1);
  CHECK(v->items[1]->integer == -300);
  CHECK(v->items[2]->integer == (int64_t{1} << 40));
  CHECK(v->items[3]->integer == INT64_MIN);
}

TEST_CASE("pickle: globals are placeholders, never resolved", "[pickle]") {
  // GLOBAL os.system, REDUCE ('echo hi',): must become an object node only.
  const std::string bytes = std::string("\x80" "\x02" "cos" "\x0a" "system" "\x0a" "X" "\x07" "\x00" "\x00" "\x00" "echo hi" "\x85" "R.", 28);
  PyRef v = ParsePickle(bytes);
  REQUIRE(v->kind == PyKind::kObject);
  CHECK(v->QualifiedName() == "os.system");
  CHECK(v->items.at(0)->str == "echo hi");
}

TEST_CASE("pickle: malformed input throws a format error", "[pickle]") {
  const std::vector<std::string> bad = {
      std::string(""),                       // no STOP
      std::string("\x80\x02", 2),            // no STOP
      std::string("\x80\x02h\x05.", 5),      // memo key undefined
      std::string("\x80\x02X\xff\x00\x00\x00" "ab.", 10),  // string past the end (split: \x00ab would be one escape)
      std::string("\x80\x02\xff.", 4),       // unknown opcode
      std::string("\x80\x02t.", 4),          // TUPLE without MARK
      std::string("\x80\x02R.", 4),          // stack underflow
  };
  for (const std::string& b : bad) {
    CHECK_THROWS_AS(ParsePickle(b), Error);
  }
}

TEST_CASE("pickle: every prefix of a real data.pkl fails cleanly", "[pickle]") {
  const std::string bytes = std::string("\x80" "\x02" "}q" "\x00" "(X" "\x01" "\x00" "\x00" "\x00" "aq" "\x01" "]q" "\x02" "(K" "\x01" "G@" "\x04" "\x00" "\x00" "\x00" "\x00" "\x00" "\x00" "N" "\x88" "eX" "\x01" "\x00" "\x00" "\x00" "bq" "\x03" "X" "\x01" "\x00" "\x00" "\x00" "xq" "\x04" "c_codecs" "\x0a" "encode" "\x0a" "q" "\x05" "X" "\x02" "\x00" "\x00" "\x00" "yzq" "\x06" "X" "\x06" "\x00" "\x00" "\x00" "latin1q" "\x07" "\x86" "q" "\x08" "Rq" "\x09" "\x86" "q" "\x0a" "u.", 99);
  for (size_t n = 0; n + 1 < bytes.size(); ++n) {
    CHECK_THROWS_AS(ParsePickle(bytes.substr(0, n)), Error);
  }
}
