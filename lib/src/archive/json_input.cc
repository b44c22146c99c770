#include "json_input.h"

#include "tsctl/escape.h"

namespace tsctl {
namespace {

// Byte offset of the first byte of `s` that is not well-formed UTF-8.
size_t FirstBadUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
    if (n == 0 || i + n > s.size() || !IsValidUtf8(s.substr(i, n))) return i;
    i += n;
  }
  return s.size();
}

// Where the nesting first passes the limit, or npos.
size_t TooDeepAt(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::string JsonInputProblem(std::string_view text) {
  if (!IsValidUtf8(text)) return "not valid UTF-8 (byte " + std::to_string(FirstBadUtf8(text)) + ")";
  const size_t deep = TooDeepAt(text);
  if (deep != std::string_view::npos) {
    return "nests deeper than " + std::to_string(kMaxJsonDepth) + " levels (byte " + std::to_string(deep) + ")";
  }
  try {
    const nlohmann::json parsed = nlohmann::json::parse(text);  // iterative parser; depth bounded above
    (void)parsed;
  } catch (const nlohmann::json::exception& e) {
    std::string why = e.what();
    const size_t close = why.find("] ");
    if (why.rfind("[json.exception.", 0) == 0 && close != std::string::npos) why = why.substr(close + 2);
    return "invalid JSON: " + why;
  }
  return {};
}

nlohmann::json ParseJsonInput(std::string_view text, const std::string& what, ErrorKind kind) {
  std::string problem;
  if (!IsValidUtf8(text)) {
    problem = JsonInputProblem(text);
  } else if (TooDeepAt(text) != std::string_view::npos) {
    problem = JsonInputProblem(text);
  } else {
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      problem = JsonInputProblem(text);
    }
  }
  throw Error(kind, what + ": " + problem);
}

bool AcceptJsonInput(std::string_view text) {
  return IsValidUtf8(text) && TooDeepAt(text) == std::string_view::npos && nlohmann::json::accept(text);
}

}  // namespace tsctl
