// The .pt2 parts of inspect's output (render_inspect.cc calls these); not a
// public interface.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "tsctl/pt2.h"

namespace tsctl {

// The "pt2" member of inspect's JSON document: raw integers, shapes with
// symbols as strings. Strings are made valid UTF-8 by the caller.
nlohmann::json Pt2ToJson(const Pt2Info& info);

// The .pt2 sections of inspect's text: versions, then per program its
// signature, symbols, graph summary and tensors, sample inputs, AOTInductor
// models, notes. Every string from the archive is escaped here.
void RenderPt2Text(const Pt2Info& info, std::ostream& out);

}  // namespace tsctl
