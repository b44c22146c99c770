// JSON that comes from a user (stamp --meta, --set) or from an archive
// (extra/*.json, model.json, tsctl_inputs.json): parsed in one place, with a
// depth limit, so that no later merge, comparison or print (all recursive)
// can overflow the stack and nothing is ever cut silently.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tsctl/error.h"

namespace tsctl {

// The deepest nesting (arrays and objects) tsctl reads: far above any real
// producer record, low enough for every recursive walk.
inline constexpr int kMaxJsonDepth = 512;

// Parses `text`. Throws tsctl::Error of `kind` with one line naming `what`
// and the first problem: "not valid UTF-8 (byte N)", "nests deeper than 512
// levels (byte N)", or nlohmann's reason with its line and column. Linear
// in the size of `text`; a depth pre-pass runs before the parser.
nlohmann::json ParseJsonInput(std::string_view text, const std::string& what, ErrorKind kind = ErrorKind::kFormat);

// True if ParseJsonInput would accept `text`.
bool AcceptJsonInput(std::string_view text);

// Why `text` is not acceptable JSON ("" if it is), as ParseJsonInput words
// it without `what`. Parses nothing deeper than the limit.
std::string JsonInputProblem(std::string_view text);

}  // namespace tsctl
