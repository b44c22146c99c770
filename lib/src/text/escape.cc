#include "tsctl/escape.h"

#include <vector>

namespace tsctl {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (1 to 4), and its
// code point in `cp`; 0 if the bytes there are not well-formed UTF-8.
size_t Utf8Length(std::string_view s, size_t i, uint32_t& cp) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  uint8_t c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  size_t n;
  uint32_t min;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2, cp = c & 0x1f, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, cp = c & 0x0f, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool Unsafe(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfffe || cp == 0xffff;
}

void Hex(std::string& out, uint8_t byte) {
  static const char kDigits[] = "0123456789abcdef";
  out += "\\x";
  out += kDigits[byte >> 4];
  out += kDigits[byte & 0xf];
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8Length(s, i, cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string EscapeText(std::string_view s, const TextEscapeOptions& options) {
  std::string out;
  out.reserve(s.size());
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8Length(s, i, cp);
    if (n == 0) {
      Hex(out, static_cast<uint8_t>(s[i]));
      ++i;
      continue;
    }
    if (n > 1) {
      if (Unsafe(cp)) {
        for (size_t k = 0; k < n; ++k) Hex(out, static_cast<uint8_t>(s[i + k]));
      } else {
        out.append(s.substr(i, n));
      }
      i += n;
      continue;
    }
    char c = s[i++];
    if ((c == '\n' || c == '\t') && options.keep_newlines) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\' && options.escape_backslash) {
      out += "\\\\";
    } else if (static_cast<uint8_t>(c) < 0x20 || c == 0x7f) {
      Hex(out, static_cast<uint8_t>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::string HtmlEscape(std::string_view s, const TextEscapeOptions& options) {
  const std::string text = EscapeText(s, options);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string ValidUtf8(std::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8Length(s, i, cp);
    if (n == 0) {
      Hex(out, static_cast<uint8_t>(s[i]));
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace tsctl
