// The extra/ section: JSON records compared value by value, short text with
// a unified diff, anything else by size and CRC-32.
#include <map>
#include <set>
#include <string>

#include "../text/json_util.h"
#include "diff_internal.h"
#include "tsctl/escape.h"
#include "../archive/json_input.h"
#include "tsctl/error.h"
#include "tsctl/text_diff.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

using nlohmann::json;

std::string Compact(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 200) s = s.substr(0, 197) + "...";
  return s;
}

std::string JsonPointerEscape(const std::string& key) {
  // RFC 6901: "~" -> "~0", "/" -> "~1".
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

void WalkJson(const json& a, const json& b, const std::string& ptr, std::vector<JsonChange>& out, int depth) {
  if (a == b) return;
  if (depth < 64 && a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      std::string p = ptr + "/" + JsonPointerEscape(it.key());
      if (!b.contains(it.key())) {
        out.push_back({p, ChangeKind::kRemoved, Compact(it.value()), ""});
      } else {
        WalkJson(it.value(), b.at(it.key()), p, out, depth + 1);
      }
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      if (!a.contains(it.key())) out.push_back({ptr + "/" + JsonPointerEscape(it.key()), ChangeKind::kAdded, "", Compact(it.value())});
    }
    return;
  }
  if (depth < 64 && a.is_array() && b.is_array()) {
    size_t common = std::min(a.size(), b.size());
    for (size_t i = 0; i < common; ++i) WalkJson(a[i], b[i], ptr + "/" + std::to_string(i), out, depth + 1);
    for (size_t i = common; i < a.size(); ++i) out.push_back({ptr + "/" + std::to_string(i), ChangeKind::kRemoved, Compact(a[i]), ""});
    for (size_t i = common; i < b.size(); ++i) out.push_back({ptr + "/" + std::to_string(i), ChangeKind::kAdded, "", Compact(b[i])});
    return;
  }
  out.push_back({ptr, ChangeKind::kChanged, Compact(a), Compact(b)});
}

}  // namespace

namespace diff_internal {

std::vector<JsonChange> DiffJson(const nlohmann::json& a, const nlohmann::json& b) {
  std::vector<JsonChange> out;
  WalkJson(a, b, "", out, 0);
  return out;
}

void DiffExtra(const Side& a, const Side& b, const DiffOptions& options, DiffResult& result) {
  std::map<std::string, const ZipEntry*> ea, eb;
  for (const auto& [name, e] : a.records) {
    if (name.rfind("extra/", 0) == 0) ea[name.substr(6)] = e;
  }
  for (const auto& [name, e] : b.records) {
    if (name.rfind("extra/", 0) == 0) eb[name.substr(6)] = e;
  }
  for (const auto& [name, x] : ea) {
    if (!eb.count(name)) result.extra.push_back({name, ChangeKind::kRemoved, "", {}, "", {}});
  }
  for (const auto& [name, x] : ea) {
    auto it = eb.find(name);
    if (it == eb.end()) continue;
    const ZipEntry* y = it->second;
    if (!options.exact && x->crc32 == y->crc32 && x->uncompressed_size == y->uncompressed_size) continue;
    ExtraChange c{name, ChangeKind::kChanged, "binary", {}, "", {}};
    std::string ta, tb;
    bool read = x->uncompressed_size <= options.max_text_bytes && y->uncompressed_size <= options.max_text_bytes;
    if (read) {
      try {
        ta = ReadEntry(a.archive.source(), *x, options.max_text_bytes);
        tb = ReadEntry(b.archive.source(), *y, options.max_text_bytes);
      } catch (const Error& e) {
        read = false;
        result.warnings.push_back("extra/" + name + ": " + e.what());
      }
    }
    if (read && ta == tb) continue;  // --exact, and the bytes are equal
    if (!read && x->crc32 == y->crc32 && x->uncompressed_size == y->uncompressed_size) {
      try {
        if (RecordsEqual(a, *x, b, *y)) continue;
      } catch (const Error& e) {
        result.warnings.push_back("extra/" + name + ": " + e.what());
      }
    }
    if (read) {
      auto is_json = [](const std::string& s) { return !s.empty() && (s[0] == '{' || s[0] == '[') && AcceptJsonInput(s); };
      for (const std::string* t : {&ta, &tb}) {
        if (!t->empty() && ((*t)[0] == '{' || (*t)[0] == '[') && JsonTextDepth(*t, kMaxJsonDepth) > kMaxJsonDepth) {
          result.warnings.push_back("extra/" + name + " (" + (t == &ta ? "A" : "B") + "): JSON nests deeper than " +
                                    std::to_string(kMaxJsonDepth) + " levels; compared as text");
        }
      }
      if (is_json(ta) && is_json(tb)) {
        c.content_type = "json";
        c.json_changes = DiffJson(json::parse(ta), json::parse(tb));
        if (c.json_changes.empty()) c.fields.push_back({"formatting", "", "differs, same JSON value"});
      } else if (IsTextual(ta) && IsTextual(tb)) {
        c.content_type = "text";
        c.unified_diff = UnifiedDiff(ta, tb, options.context_lines);
      }
    }
    if (c.content_type == "binary" || !read) {
      if (x->uncompressed_size != y->uncompressed_size) {
        c.fields.push_back({"size", std::to_string(x->uncompressed_size), std::to_string(y->uncompressed_size)});
      }
      if (x->crc32 != y->crc32) c.fields.push_back({"crc32", Crc32Hex(x->crc32), Crc32Hex(y->crc32)});
      if (c.fields.empty()) c.fields.push_back({"bytes", "", "differ"});
    }
    result.extra.push_back(std::move(c));
  }
  for (const auto& [name, y] : eb) {
    if (!ea.count(name)) result.extra.push_back({name, ChangeKind::kAdded, "", {}, "", {}});
  }
}

}  // namespace diff_internal
}  // namespace tsctl
