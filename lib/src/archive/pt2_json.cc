#include "pt2_json.h"

#include "../text/json_util.h"
#include "tsctl/dtype.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"

namespace tsctl::pt2_json {

json ReadJson(const Archive& a, const std::string& record, uint64_t max_bytes) {
  std::string text;
  try {
    text = a.Read(record, max_bytes);
  } catch (const Error& e) {
    throw Error(ErrorKind::kFormat, record + ": " + e.what());
  }
  if (JsonTextDepth(text, kMaxProgramJsonDepth) > kMaxProgramJsonDepth) {
    throw Error(ErrorKind::kFormat, record + ": JSON nested deeper than " + std::to_string(kMaxProgramJsonDepth) + " levels");
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(ErrorKind::kFormat, record + ": not valid JSON");
  return j;
}

const json* Field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string Str(const json& obj, const char* key, const std::string& fallback) {
  const json* v = Field(obj, key);
  return v && v->is_string() ? v->get<std::string>() : fallback;
}

int64_t Int(const json& obj, const char* key, int64_t fallback) {
  const json* v = Field(obj, key);
  return v && v->is_number_integer() ? v->get<int64_t>() : fallback;
}

bool Bool(const json& obj, const char* key, bool fallback) {
  const json* v = Field(obj, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

const json& Array(const json& obj, const char* key) {
  static const json kEmpty = json::array();
  const json* v = Field(obj, key);
  return v && v->is_array() ? *v : kEmpty;
}

const json& Object(const json& obj, const char* key) {
  static const json kEmpty = json::object();
  const json* v = Field(obj, key);
  return v && v->is_object() ? *v : kEmpty;
}

std::pair<std::string, const json*> Union(const json& u) {
  if (!u.is_object()) return {"", nullptr};
  for (auto it = u.begin(); it != u.end(); ++it) {
    if (!it->is_null()) return {it.key(), &*it};
  }
  // {"as_none": null} in early files, {"as_none": true} later.
  if (u.contains("as_none") && u.size() == 1) return {"as_none", &u["as_none"]};
  return {"", nullptr};
}

std::string DtypeName(int64_t t) {
  if (const DtypeInfo* d = DtypeByPt2(t)) return d->name;  // tsctl/dtype.h's .pt2 column
  return "unknown(" + std::to_string(t) + ")";
}

std::string LayoutName(int64_t layout) {
  static const char* kNames[] = {"unknown", "torch.sparse_coo", "torch.sparse_csr", "torch.sparse_csc",
                                 "torch.sparse_bsr", "torch.sparse_bsc", "torch._mkldnn", "torch.strided"};
  return layout >= 0 && layout < 8 ? kNames[layout] : "layout(" + std::to_string(layout) + ")";
}

std::string MemoryFormatName(int64_t format) {
  static const char* kNames[] = {"unknown", "torch.contiguous_format", "torch.channels_last",
                                 "torch.channels_last_3d", "torch.preserve_format"};
  return format >= 0 && format < 5 ? kNames[format] : "memory_format(" + std::to_string(format) + ")";
}

std::string SymbolName(const std::string& expr) {
  const std::string prefix = "Symbol('";
  if (expr.rfind(prefix, 0) != 0) return expr;
  size_t end = expr.find('\'', prefix.size());
  return end == std::string::npos ? expr : expr.substr(prefix.size(), end - prefix.size());
}

std::string SymIntText(const json& v) {
  auto [kind, value] = Union(v);
  if (kind == "as_int" && value->is_number_integer()) return std::to_string(value->get<int64_t>());
  if (kind == "as_expr") return SymbolName(Str(*value, "expr_str", "?"));
  return "?";
}

std::string DeviceText(const json& device) {
  std::string type = Str(device, "type", "?");
  const json* index = Field(device, "index");
  return index && index->is_number_integer() ? type + ":" + std::to_string(index->get<int64_t>()) : type;
}

TensorMeta ReadTensorMeta(const json& meta) {
  TensorMeta t;
  t.dtype = DtypeName(Int(meta, "dtype", 0));
  for (const json& s : Array(meta, "sizes")) t.sizes.push_back(SymIntText(s));
  for (const json& s : Array(meta, "strides")) {
    auto [kind, value] = Union(s);
    t.strides.push_back(kind == "as_int" && value->is_number_integer() ? value->get<int64_t>() : -1);
  }
  if (const json* off = Field(meta, "storage_offset")) {
    auto [kind, value] = Union(*off);
    if (kind == "as_int" && value->is_number_integer()) t.storage_offset = value->get<int64_t>();
  }
  t.device = DeviceText(Object(meta, "device"));
  t.requires_grad = Bool(meta, "requires_grad");
  return t;
}

}  // namespace tsctl::pt2_json
