// stamp's planner: what the archive becomes. Reads the archive, writes
// nothing.
#include <algorithm>
#include <string>

#include "../text/json_util.h"
#include "stamp_internal.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "../archive/json_input.h"
#include "../archive/producer.h"
#include "tsctl/zip.h"
#include "tsctl/zip_structure.h"

namespace tsctl::stamp {
namespace {

// Deep merge: objects merge key by key, anything else replaces.
void Merge(nlohmann::json& into, const nlohmann::json& from) {
  for (auto it = from.begin(); it != from.end(); ++it) {
    if (it->is_object() && into.contains(it.key()) && into[it.key()].is_object()) {
      Merge(into[it.key()], *it);
    } else {
      into[it.key()] = *it;
    }
  }
}

void CheckKey(const std::string& key) {
  if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos) {
    throw Error(ErrorKind::kUsage, "bad --set key '" + key + "'");
  }
}

void SetDotted(nlohmann::json& j, const std::string& key, const std::string& raw) {
  CheckKey(key);
  // JSON if it parses; a document too deep to merge and print is refused,
  // not turned into a string.
  const int levels = static_cast<int>(std::count(key.begin(), key.end(), '.')) + 1;
  if (levels + JsonTextDepth(raw, kMaxJsonDepth) > kMaxJsonDepth) {
    throw Error(ErrorKind::kUsage, "--set " + key + ": value nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  nlohmann::json value = AcceptJsonInput(raw) ? nlohmann::json::parse(raw) : nlohmann::json(raw);
  nlohmann::json* at = &j;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (dot == std::string::npos) {
      (*at)[part] = value;
      return;
    }
    if (!(*at)[part].is_object()) (*at)[part] = nlohmann::json::object();
    at = &(*at)[part];
    start = dot + 1;
  }
}

nlohmann::json ParseMeta(const StampOptions& options) {
  if (options.meta_json.size() > kMaxMetaBytes) {
    throw Error(ErrorKind::kUsage, "--meta: " + std::to_string(options.meta_json.size()) + " bytes, more than the limit of " +
                                       std::to_string(kMaxMetaBytes) + " for a producer record");
  }
  nlohmann::json meta = ParseJsonInput(options.meta_json, "--meta", ErrorKind::kUsage);
  if (!meta.is_object()) throw Error(ErrorKind::kUsage, std::string("--meta: a JSON ") + meta.type_name() + ", not an object");
  return meta;
}

}  // namespace

void CheckOptions(const StampOptions& options) {
  CheckExtraName(options.meta_name);
  for (const auto& [name, data] : options.files) CheckExtraName(name);
  for (const std::string& name : options.remove) CheckExtraName(name);
  for (const auto& [key, value] : options.set) CheckKey(key);
  if (options.has_meta) ParseMeta(options);
}

Plan MakePlan(const Archive& archive, const StampOptions& options) {
  CheckOptions(options);
  RequireSoundStructure(archive.layout());
  Plan plan;
  for (const auto& [name, data] : options.files) plan.writes[name] = data;
  const bool touch_producer = options.auto_fields || options.has_meta || !options.set.empty();
  if (touch_producer) {
    nlohmann::json producer = nlohmann::json::object();
    const std::string record = "extra/" + options.meta_name;
    if (!options.replace && archive.Has(record)) {
      const std::string old = archive.Read(record);
      const std::string problem = JsonInputProblem(old);
      if (!problem.empty()) throw Error(ErrorKind::kFormat, record + ": " + problem + "; use --replace to overwrite it");
      producer = nlohmann::json::parse(old);
      if (!producer.is_object()) {
        throw Error(ErrorKind::kFormat, record + " holds no JSON object; use --replace to overwrite it");
      }
    }
    if (options.auto_fields) Merge(producer, AutoProducerFields());
    if (options.has_meta) Merge(producer, ParseMeta(options));
    for (const auto& [key, value] : options.set) SetDotted(producer, key, value);
    plan.producer = producer;
    plan.writes[options.meta_name] = DumpJson(producer, 2) + "\n";
  }
  for (const std::string& name : options.remove) {
    if (plan.writes.count(name)) {
      const bool auto_written = name == options.meta_name && options.auto_fields && !options.has_meta && options.set.empty();
      throw Error(ErrorKind::kUsage, "extra/" + name + " is both written and removed" +
                                         (auto_written ? std::string(": stamp writes it by default (its producer "
                                                                     "fields); pass --no-auto to remove it")
                                                       : std::string()));
    }
    if (!archive.Has("extra/" + name)) throw Error(ErrorKind::kUsage, "no record extra/" + name + " to remove");
    plan.removes.insert(name);
  }
  for (const auto& [name, data] : plan.writes) {
    const ZipEntry* old = archive.Find("extra/" + name);
    plan.actions.push_back({"extra/" + name, old ? "replace" : "add", old ? old->uncompressed_size : 0, data.size()});
  }
  for (const std::string& name : plan.removes) {
    plan.actions.push_back({"extra/" + name, "remove", archive.Find("extra/" + name)->uncompressed_size, 0});
  }
  // Kept: every record except the extra/ records replaced or removed (all
  // copies of a duplicated name go). Raw entries: the writer copies their
  // central-directory records as they are, every copy included.
  for (const ZipEntry& e : archive.layout().entries) {
    const std::string name = archive.RecordName(e);
    const bool extra = name.rfind("extra/", 0) == 0;
    const std::string rest = extra ? name.substr(6) : "";
    if (!(extra && (plan.writes.count(rest) || plan.removes.count(rest)))) plan.kept.push_back(&e);
  }
  return plan;
}

ZipWriter MakeWriter(const Archive& archive, const Plan& plan, uint64_t base) {
  const ZipLayout& layout = archive.layout();
  const std::string old_cd = archive.source().ReadString(layout.central_directory_offset, layout.central_directory_size);
  const std::string prefix = archive.root().empty() ? "" : archive.root() + "/";
  ZipWriter writer(base);
  for (const ZipEntry* e : plan.kept) {
    writer.KeepRecord(old_cd.substr(e->central_offset - layout.central_directory_offset, e->central_size));
  }
  for (const auto& [name, data] : plan.writes) writer.WriteRecord(prefix + "extra/" + name, data);
  return writer;
}

}  // namespace tsctl::stamp
