// Renderers of `tsctl stamp`: its result (what was or would be changed) and
// the extra/ records `stamp --show` lists.
#include <sstream>

#include "../text/json_util.h"
#include "render_json.h"
#include "tsctl/escape.h"
#include "tsctl/inspect.h"
#include "tsctl/stamp.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

// Each line of `text` (already escaped) after "    | ".
void Quote(const std::string& text, std::ostream& out) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) out << "    | " << line << '\n';
}

}  // namespace

nlohmann::json ToJson(const StampResult& r) {
  nlohmann::json j;
  j["schema_version"] = kStampSchemaVersion;
  j["path"] = r.path;
  j["output"] = r.output;
  j["dry_run"] = r.dry_run;
  j["repaired"] = r.repaired;
  j["actions"] = nlohmann::json::array();
  for (const auto& a : r.actions) {
    j["actions"].push_back({{"record", a.record}, {"action", a.action}, {"old_size", a.old_size}, {"new_size", a.new_size}});
  }
  j["producer"] = Json(r.producer);
  j["bytes_written"] = r.bytes_written;
  MakeJsonUtf8(j);  // record names from the archive may not be UTF-8
  return j;
}

void RenderText(const StampResult& r, std::ostream& out, bool repair_only) {
  if (repair_only) {
    out << EscapeText(r.path) << (r.repaired ? (r.dry_run ? ": would undo an interrupted stamp\n" : ": undid an interrupted stamp\n")
                                 : ": no interrupted stamp to undo\n");
    return;
  }
  out << (r.dry_run ? "would stamp " : "stamped ") << EscapeText(r.output);
  if (r.output != r.path) out << " (from " << EscapeText(r.path) << ")";
  out << '\n';
  if (r.repaired) {
    out << (r.output != r.path ? "  found an interrupted stamp in the source (read as the original)\n"
            : r.dry_run        ? "  would undo an interrupted stamp first\n"
                               : "  repaired: undid an interrupted stamp first\n");
  }
  for (const StampAction& a : r.actions) {
    out << "  " << a.action << ' ' << EscapeText(a.record);
    if (a.action == "replace") out << " (" << HumanBytes(a.old_size) << " -> " << HumanBytes(a.new_size) << ")";
    else if (a.action == "add") out << " (" << HumanBytes(a.new_size) << ")";
    out << '\n';
  }
  if (r.dry_run && !r.producer.IsNull()) Quote(EscapeText(r.producer.Text(2), {.keep_newlines = true}), out);
}

nlohmann::json StampShowToJson(const ArchiveInfo& info) {
  nlohmann::json j = ToJson(info);
  return {{"schema_version", kStampSchemaVersion}, {"path", info.path}, {"extra", j["extra"]}};
}

void RenderStampShowText(const ArchiveInfo& info, std::ostream& out) {
  out << EscapeText(info.path) << '\n';
  if (info.extra.empty()) out << "  (no extra/ records)\n";
  for (const ExtraInfo& x : info.extra) {
    out << "  extra/" << EscapeText(x.name) << "  " << HumanBytes(x.size) << "  " << x.content_type
        << (x.truncated ? " (only its beginning shown)" : "") << '\n';
    std::string shown = x.content;
    if (x.content_type == "json") shown = DumpJson(nlohmann::json::parse(x.content, nullptr, false), 2);
    Quote(EscapeText(shown, {.keep_newlines = true}), out);
  }
}

std::string RenderJson(const StampResult& result) { return DumpJson(ToJson(result)); }
std::string RenderStampShowJson(const ArchiveInfo& info) { return DumpJson(StampShowToJson(info)); }

}  // namespace tsctl
