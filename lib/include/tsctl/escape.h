// Making strings from an archive safe to show. Every name, pickle string,
// code line and extra/ text is untrusted: it may hold control characters,
// ANSI escape sequences, newlines or bytes that are not UTF-8. The renderers
// pass every such string through one of these before it reaches a terminal,
// a JSON document, an XML report or an HTML page (JSON through
// lib/src/text/json_util.h).
#pragma once

#include <string>
#include <string_view>

namespace tsctl {

struct TextEscapeOptions {
  // Keep '\n' and '\t' as they are (multi-line text: code, extra/ contents).
  bool keep_newlines = false;
  // Write a backslash as "\\" so that every escape reads back unambiguously.
  // Off for code, whose backslashes are its own.
  bool escape_backslash = true;
};

// Text for a terminal or a text report, always valid UTF-8 and free of
// control characters: "\n", "\r", "\t" and "\\" for those bytes, "\xdd" (two
// lower-case hex digits) for every other C0 control byte, DEL, each byte of a
// C1 control, of a bidirectional override (U+202A-U+202E, U+2066-U+2069), of
// U+2028/U+2029 and of the non-characters U+FFFE/U+FFFF, and for every byte
// that is not part of a well-formed UTF-8 sequence. The result is also a
// valid XML 1.0 string.
std::string EscapeText(std::string_view s, const TextEscapeOptions& options = {});

// Text for an HTML page, safe in element content and in an attribute value
// quoted with '"' or '\'': EscapeText(s, options) (valid UTF-8, no control
// characters, every invalid byte shown as "\xdd"), then '&', '<', '>', '"'
// and '\'' written as "&amp;", "&lt;", "&gt;", "&quot;" and "&#39;". Never
// for the inside of <script> or <style>, which take no untrusted text.
std::string HtmlEscape(std::string_view s, const TextEscapeOptions& options = {});

// Text that is valid UTF-8, for JSON: well-formed UTF-8 is kept as is (JSON
// escapes its control characters itself); each byte that is not part of a
// well-formed sequence becomes the four characters "\xdd".
std::string ValidUtf8(std::string_view s);

// True if `s` is well-formed UTF-8 (no overlong forms, surrogates or values
// past U+10FFFF).
bool IsValidUtf8(std::string_view s);

}  // namespace tsctl
