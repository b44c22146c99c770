// JSON helpers private to libtsctl: making a document valid UTF-8 before it
// is printed, and the nlohmann value behind a tsctl::JsonValue. The public
// headers carry no JSON library; renderers return JSON text.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tsctl/json_value.h"

namespace tsctl {

// Replaces, in place, every string and object key of `j` that is not valid
// UTF-8 by ValidUtf8 of it, so that dump() can never throw. Walks at most
// `max_depth` levels; deeper values are replaced by null. The default lies
// above what any JSON read through ParseJsonInput (json_input.h) can nest
// plus the levels of a report around it, so nothing read is ever cut.
void MakeJsonUtf8(nlohmann::json& j, int max_depth = 1024);

// Nesting depth of JSON text (brackets outside strings), without parsing it;
// stops counting at `limit` + 1. Used to refuse documents too deep to print.
int JsonTextDepth(std::string_view text, int limit);

// j.dump(indent) after MakeJsonUtf8, with nlohmann's error handler set to
// replace as a last guard: never throws on strings.
std::string DumpJson(const nlohmann::json& j, int indent = -1);
// The same for a document the caller no longer needs: made valid UTF-8 in
// place, not copied (a large inspect document costs its copy otherwise).
std::string DumpJson(nlohmann::json&& j, int indent = -1);


// The value behind `v`; the non-const overload makes a null one to fill.
nlohmann::json& Json(JsonValue& v);
const nlohmann::json& Json(const JsonValue& v);

}  // namespace tsctl
