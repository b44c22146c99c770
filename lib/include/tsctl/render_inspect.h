// Renderers of `tsctl inspect`'s result (lib/src/render/render_inspect.cc):
// JSON with raw integers, and text with human units and aligned tables.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "tsctl/inspect.h"

namespace tsctl {

inline constexpr int kInspectSchemaVersion = 1;

// Every string from the archive is made valid UTF-8 (see escape.h).
nlohmann::json ToJson(const ArchiveInfo& info);

struct TextOptions {
  bool show_records = true;
  bool show_code = true;
};
// Every string from the archive is escaped (see escape.h).
void RenderText(const ArchiveInfo& info, std::ostream& out, const TextOptions& options = {});

}  // namespace tsctl
