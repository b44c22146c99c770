#include <catch2/catch.hpp>

#include <algorithm>

#include <pugixml.hpp>

#include "../../lib/src/text/json_util.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"

using namespace tsctl;

TEST_CASE("escape: text keeps printable UTF-8 and escapes the rest", "[escape]") {
  CHECK(EscapeText("plain/name.py") == "plain/name.py");
  CHECK(EscapeText("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");  // é ✓ stay
  CHECK(EscapeText("a\nb") == "a\\nb");
  CHECK(EscapeText("a\tb\rc") == "a\\tb\\rc");
  CHECK(EscapeText("back\\slash") == "back\\\\slash");
  CHECK(EscapeText("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(EscapeText(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(EscapeText("del\x7f") == "del\\x7f");
  CHECK(EscapeText("bad\xdd") == "bad\\xdd");
  CHECK(EscapeText("\xc3") == "\\xc3");                      // cut sequence
  CHECK(EscapeText("\xc0\xaf") == "\\xc0\\xaf");             // overlong '/'
  CHECK(EscapeText("\xed\xa0\x80") == "\\xed\\xa0\\x80");    // surrogate
  CHECK(EscapeText("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(EscapeText("\xc2\x9b" "2J") == "\\xc2\\x9b2J");      // C1 CSI
  CHECK(EscapeText("x\xe2\x80\xaey") == "x\\xe2\\x80\\xaey"); // right-to-left override
  CHECK(EscapeText("\xef\xbf\xbf") == "\\xef\\xbf\\xbf");    // U+FFFF
}

TEST_CASE("escape: multi-line text keeps line breaks", "[escape]") {
  TextEscapeOptions code{.keep_newlines = true, .escape_backslash = false};
  CHECK(EscapeText("def f():\n\treturn '\\n'\n", code) == "def f():\n\treturn '\\n'\n");
  CHECK(EscapeText("x\x1b[2J\r\n", code) == "x\\x1b[2J\\r\n");
}

TEST_CASE("escape: HTML text holds no markup, no control and only valid UTF-8", "[escape]") {
  CHECK(HtmlEscape("plain caf\xc3\xa9") == "plain caf\xc3\xa9");
  CHECK(HtmlEscape("<script>alert('x')</script>") == "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
  CHECK(HtmlEscape("a\" onload=\"x\" & b") == "a&quot; onload=&quot;x&quot; &amp; b");
  CHECK(HtmlEscape("&lt;") == "&amp;lt;");  // an entity in the input stays text
  CHECK(HtmlEscape("\x1b[31m\xff<") == "\\x1b[31m\\xff&lt;");
  CHECK(HtmlEscape("x\xe2\x80\xaey") == "x\\xe2\\x80\\xaey");  // right-to-left override
  TextEscapeOptions code{.keep_newlines = true, .escape_backslash = false};
  CHECK(HtmlEscape("if a<b:\n\treturn '\\n'", code) == "if a&lt;b:\n\treturn &#39;\\n&#39;");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  std::string e = HtmlEscape(all);
  CHECK(IsValidUtf8(e));
  CHECK(e.find_first_of("<>\"'") == std::string::npos);
  CHECK(std::none_of(e.begin(), e.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }));
}

TEST_CASE("escape: every escaped string is valid UTF-8 and XML", "[escape]") {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  all += "\xe2\x80\xa8\xef\xbf\xbe";
  std::string e = EscapeText(all);
  CHECK(IsValidUtf8(e));
  for (unsigned char c : e) CHECK((c >= 0x20 && c != 0x7f));
  pugi::xml_document doc;
  doc.append_child("t").append_attribute("a") = e.c_str();
  std::ostringstream out;
  doc.save(out);
  pugi::xml_document back;
  REQUIRE(back.load_string(out.str().c_str()));
  CHECK(std::string(back.child("t").attribute("a").value()) == e);
}

TEST_CASE("escape: JSON strings become valid UTF-8", "[escape]") {
  CHECK(ValidUtf8("ok \xc3\xa9") == "ok \xc3\xa9");
  CHECK(ValidUtf8("bad\xdd\xff") == "bad\\xdd\\xff");
  CHECK(ValidUtf8("ctl\x1b") == "ctl\x1b");  // JSON escapes control characters itself
  nlohmann::json j = {{"name", "a\xdd"}, {"list", {"\xff", 1}}, {"nested", {{"k\xfe", "v"}}}};
  CHECK_THROWS(j.dump());
  MakeJsonUtf8(j);
  CHECK(j["name"] == "a\\xdd");
  CHECK(j["list"][0] == "\\xff");
  CHECK(j["nested"].contains("k\\xfe"));
  CHECK_NOTHROW(j.dump());
  CHECK(nlohmann::json::parse(DumpJson({{"x", "\x80"}})) == nlohmann::json({{"x", "\\x80"}}));
}

TEST_CASE("escape: JSON text depth without parsing", "[escape]") {
  CHECK(JsonTextDepth("{}", 10) == 1);
  CHECK(JsonTextDepth("{\"a\": [1, {\"b\": \"[[[[\"}]}", 10) == 3);
  CHECK(JsonTextDepth(std::string(100000, '['), 64) == 65);
}

TEST_CASE("text: EndsWith and a cut that never splits a UTF-8 character", "[escape]") {
  CHECK(EndsWith("model.npy", ".npy"));
  CHECK(EndsWith(".npy", ".npy"));
  CHECK_FALSE(EndsWith("npy", ".npy"));
  CHECK_FALSE(EndsWith("model.npz", ".npy"));
  const std::string s = "ab\xc3\xa9" "c";  // "abéc": é is bytes 2 and 3
  CHECK(Utf8CutPoint(s, 2) == 2);
  CHECK(Utf8CutPoint(s, 3) == 2);  // inside é: back to its start
  CHECK(Utf8CutPoint(s, 4) == 4);
  CHECK(Utf8CutPoint(s, 99) == s.size());
}
