// The output formats of tsctl's results, one switch: each command's --format
// is parsed once (apps/) into an OutputFormat, and each result has one
// Render(result, format) (declared beside the result, in its header) that
// returns the whole document: text, JSON (one document and a newline), JUnit
// XML, Graphviz dot. A format a result has no renderer for throws
// tsctl::Error (kUsage), naming the formats it has.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tsctl {

enum class OutputFormat { kText, kJson, kJUnit, kDot };

// "text", "json", "junit", "dot".
const char* OutputFormatName(OutputFormat format);
// By name; nullopt if none.
std::optional<OutputFormat> OutputFormatByName(std::string_view name);
// The kUsage error for a format `what` has no renderer for ("--format junit
// is not an output of inspect (it has text, json)").
[[noreturn]] void NoRenderer(OutputFormat format, const std::string& what, const std::vector<OutputFormat>& has);

}  // namespace tsctl
