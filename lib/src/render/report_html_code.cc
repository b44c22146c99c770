// Keyword colouring of TorchScript code (the Python subset the serializer
// prints) for the report page: keywords, strings, comments and numbers in
// <span>s, everything escaped. Spans begin and end only at ASCII bytes, so
// escaping piece by piece reads bytes that are not UTF-8 as escaping the
// whole text would.
#include <string_view>
#include <unordered_set>

#include "report_html.h"
#include "tsctl/escape.h"

namespace tsctl::report {
namespace {

bool IsWordStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWord(char c) { return IsWordStart(c) || IsDigit(c); }

bool IsKeyword(std::string_view word) {
  static const std::unordered_set<std::string_view> kKeywords = {
      "and",   "as",   "assert", "break", "class",  "continue", "def",    "del",   "elif",
      "else",  "except", "False", "finally", "for", "from",     "global", "if",    "import",
      "in",    "is",   "lambda", "None",  "nonlocal", "not",    "or",     "pass",  "raise",
      "return", "True", "try",   "while", "with",   "yield"};
  return kKeywords.count(word) > 0;
}

// Where the string literal starting at `i` (a quote) ends: past its closing
// quote, at the end of its line if unterminated, or at the end of the code.
size_t StringEnd(std::string_view code, size_t i) {
  const char q = code[i];
  if (code.substr(i, 3) == std::string(3, q)) {
    const size_t close = code.find(std::string(3, q), i + 3);
    return close == std::string_view::npos ? code.size() : close + 3;
  }
  for (size_t k = i + 1; k < code.size(); ++k) {
    if (code[k] == '\\') {
      ++k;
    } else if (code[k] == q) {
      return k + 1;
    } else if (code[k] == '\n') {
      return k;
    }
  }
  return code.size();
}

}  // namespace

std::string ColourCode(std::string_view code) {
  const TextEscapeOptions multiline{.keep_newlines = true, .escape_backslash = false};
  std::string out;
  out.reserve(code.size() + code.size() / 4);
  size_t plain = 0;  // start of the text not yet written
  auto span = [&](const char* cls, size_t begin, size_t end) {
    if (begin > plain) out += HtmlEscape(code.substr(plain, begin - plain), multiline);
    out += std::string("<span class=\"") + cls + "\">" + HtmlEscape(code.substr(begin, end - begin), multiline) +
           "</span>";
    plain = end;
  };
  for (size_t i = 0; i < code.size();) {
    const char c = code[i];
    const bool word_before = i > 0 && IsWord(code[i - 1]);
    size_t end = i + 1;
    if (c == '#') {
      end = std::min(code.size(), code.find('\n', i));
      span("cm", i, end);
    } else if (c == '"' || c == '\'') {
      end = StringEnd(code, i);
      span("s", i, end);
    } else if (IsWordStart(c)) {
      while (end < code.size() && IsWord(code[end])) ++end;
      if (!word_before && IsKeyword(code.substr(i, end - i))) span("k", i, end);
    } else if (IsDigit(c) && !word_before) {
      while (end < code.size() && (IsWord(code[end]) || code[end] == '.')) ++end;
      span("nu", i, end);
    }
    i = end;
  }
  if (plain < code.size()) out += HtmlEscape(code.substr(plain), multiline);
  return out;
}

}  // namespace tsctl::report
