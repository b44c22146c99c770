// The wire format of ModelCheckResult: one writer and one reader, built from
// one field list so they cannot disagree.
#include <nlohmann/json.hpp>

#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/model_check.h"

namespace tsctl {
namespace {

using nlohmann::json;

// Visits every field of a struct with its wire name. The writer and the
// reader both call these, so a field cannot be written under one name and
// read under another.
template <typename V, typename T>
void OutputFields(V& v, T& o) {
  v("name", o.name);
  v("desc", o.desc);
  v("nonfinite", o.nonfinite);
}

template <typename V>
void LeafFields(V& v, ReferenceLeaf& o) {
  v("name", o.name);
  v("pass", o.pass);
  v("compared", o.compared);
  v("is_tensor", o.is_tensor);
  v("rtol", o.rtol);
  v("atol", o.atol);
  v("max_abs", o.max_abs);
  v("mean_abs", o.mean_abs);
  v("max_rel", o.max_rel);
  v("mean_rel", o.mean_rel);
  v("has_min_tolerance", o.has_min_tolerance);
  v("min_atol", o.min_atol);
  v("min_rtol", o.min_rtol);
  v("error", o.error);
}

template <typename V>
void ResultFields(V& v, ModelCheckResult& r) {
  v("loaded", r.loaded);
  v("load_ms", r.load_ms);
  v("load_error", r.load_error);
  v("methods", r.methods);
  v("ops", r.ops);
  v("ops_error", r.ops_error);
  v("method_found", r.method_found);
  v("schema", r.schema);
  v("ran", r.ran);
  v("run_skipped", r.run_skipped);
  v("run_error", r.run_error);
  v("input_source", r.input_source);
  v("inputs_desc", r.inputs_desc);
  v("inputs_note", r.inputs_note);
  v("inputs_flags", r.inputs_flags);
  v("input_args", r.input_args);
  v("outputs", r.outputs);
  v("deterministic", r.deterministic);
  v("determinism_note", r.determinism_note);
  v("max_run_diff", r.max_run_diff);
  v("candidates_tried", r.candidates_tried);
  v("outputs_saved", r.outputs_saved);
  v("reference_compared", r.reference_compared);
  v("reference_source", r.reference_source);
  v("reference_error", r.reference_error);
  v("reference", r.reference);
  v("recorded", r.recorded);
  v("mobile_loaded", r.mobile_loaded);
  v("mobile_error", r.mobile_error);
}

struct Writer {
  json j = json::object();
  template <typename T>
  void operator()(const char* key, T& value) { j[key] = Encode(value); }
  template <typename T>
  static json Encode(T& value) { return value; }
  static json Encode(std::optional<bool>& value) { return value ? json(*value) : json(nullptr); }
  static json Encode(std::vector<OutputSummary>& values) {
    json a = json::array();
    for (auto& o : values) {
      Writer w;
      OutputFields(w, o);
      a.push_back(std::move(w.j));
    }
    return a;
  }
  static json Encode(std::vector<ArgSpec>& values) {
    json a = json::array();
    for (auto& o : values) a.push_back({o.name, o.value});
    return a;
  }
  static json Encode(std::vector<ReferenceLeaf>& values) {
    json a = json::array();
    for (auto& o : values) {
      Writer w;
      LeafFields(w, o);
      a.push_back(std::move(w.j));
    }
    return a;
  }
};

struct Reader {
  const json& j;
  template <typename T>
  void operator()(const char* key, T& value) {
    if (!j.is_object() || !j.contains(key)) throw Error(ErrorKind::kFormat, std::string("model check result: field '") + key + "' is missing");
    try {
      Decode(j.at(key), value);
    } catch (const json::exception& e) {
      throw Error(ErrorKind::kFormat, std::string("model check result: field '") + key + "': " + e.what());
    }
  }
  template <typename T>
  static void Decode(const json& v, T& value) { value = v.get<T>(); }
  static void Decode(const json& v, std::optional<bool>& value) {
    if (v.is_null()) value.reset();
    else value = v.get<bool>();
  }
  static void Decode(const json& v, std::vector<OutputSummary>& values) {
    for (const json& e : v) {
      Reader r{e};
      OutputFields(r, values.emplace_back());
    }
  }
  static void Decode(const json& v, std::vector<ArgSpec>& values) {
    for (const json& e : v) values.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>()});
  }
  static void Decode(const json& v, std::vector<ReferenceLeaf>& values) {
    for (const json& e : v) {
      Reader r{e};
      LeafFields(r, values.emplace_back());
    }
  }
};

}  // namespace

std::string SerializeModelCheck(const ModelCheckResult& result) {
  Writer w;
  ResultFields(w, const_cast<ModelCheckResult&>(result));  // the writer only reads
  w.j["wire_version"] = kModelCheckWireVersion;
  return DumpJson(w.j);  // strings from LibTorch may not be UTF-8
}

ModelCheckResult DeserializeModelCheck(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(ErrorKind::kFormat, "model check result: not a JSON object");
  if (!j.contains("wire_version") || j["wire_version"] != kModelCheckWireVersion) {
    throw Error(ErrorKind::kFormat, "model check result: wire version " + (j.contains("wire_version") ? j["wire_version"].dump() : std::string("missing")) +
                                        ", expected " + std::to_string(kModelCheckWireVersion) + " (plugin and tsctl differ)");
  }
  ModelCheckResult r;
  Reader reader{j};
  ResultFields(reader, r);
  return r;
}

}  // namespace tsctl
