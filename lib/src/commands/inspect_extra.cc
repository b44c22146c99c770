// inspect's extra/ section: every extra/ record once, shown as JSON or text
// when it is small enough, else its start when that is text.
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "../text/json_util.h"
#include "inspect_internal.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"

namespace tsctl::inspect_internal {
namespace {

// extra/ JSON nested deeper than this is shown as text: printing it would
// recurse once per level.
constexpr int kMaxJsonDepth = 64;

}  // namespace

void ReadExtra(const Archive& a, const InspectOptions& options, ArchiveInfo& info) {
  const ByteSource& src = a.source();
  // extra/ records: every one, whatever its name (a duplicated name once).
  for (const std::string& name : a.RecordsUnder("extra/")) {
    const ZipEntry& e = *a.Find(name);
    ExtraInfo x;
    x.name = name.substr(6);
    x.size = e.uncompressed_size;
    uint64_t limit = std::max(options.max_extra_json, options.max_extra_text);
    if (e.uncompressed_size > limit) {
      // Too large to show whole: look at its start to tell text from binary.
      x.content_type = "binary";
      x.truncated = true;
      try {
        std::string head;
        struct Enough {};
        try {
          StreamEntry(src, e, uint64_t{1} << 40, [&](const char* p, size_t n) {
            head.append(p, std::min<size_t>(n, 512 - head.size()));
            if (head.size() >= 512) throw Enough{};
          });
        } catch (const Enough&) {
        }
        // Cut at the last newline or space so a multi-byte character is not split.
        size_t cut = head.find_last_of("\n ");
        if (cut != std::string::npos && cut > 0) head.resize(cut);
        if (IsTextual(head)) {
          x.content_type = "text";
          x.content = head;
        }
      } catch (const Error& err) {
        x.content_type = "unreadable";
        x.error = err.what();
      }
      info.extra.push_back(std::move(x));
      continue;
    }
    try {
      std::string content = ReadEntry(src, e, limit);
      if (!content.empty() && (content[0] == '{' || content[0] == '[') &&
          content.size() <= options.max_extra_json &&
          JsonTextDepth(content, kMaxJsonDepth) <= kMaxJsonDepth && nlohmann::json::accept(content)) {
        x.content_type = "json";
        x.content = content;
      } else if (IsTextual(content)) {
        x.content_type = "text";
        x.truncated = content.size() > options.max_extra_text;
        x.content = content.substr(0, static_cast<size_t>(options.max_extra_text));
      } else {
        x.content_type = "binary";
      }
    } catch (const Error& err) {
      x.content_type = "unreadable";
      x.error = err.what();
      info.warnings.push_back("extra/" + x.name + ": " + err.what());
    }
    info.extra.push_back(std::move(x));
  }
}

}  // namespace tsctl::inspect_internal
