// Reading the JSON of .pt2 archives (torch/_export/serde/schema.py) without
// trusting it: bounded parsing, and accessors that check every type. Shared by
// pt2.cc (inspect's facts) and pt2_graph.cc (the graph printer); not a public
// interface.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tsctl/archive.h"

namespace tsctl::pt2_json {

using nlohmann::json;

// Program JSON is read up to this size (a 24-layer transformer's is ~10 MB)
// and nesting depth (nested graphs of control flow add a few levels each).
inline constexpr uint64_t kMaxJsonBytes = uint64_t{256} << 20;
inline constexpr int kMaxProgramJsonDepth = 200;

// Parses a JSON record. Throws tsctl::Error (kFormat) naming the record if it
// is missing, too big, nested deeper than kMaxProgramJsonDepth or not JSON.
json ReadJson(const Archive& a, const std::string& record, uint64_t max_bytes = kMaxJsonBytes);

// obj[key] when `obj` is an object holding a non-null `key`; else null.
const json* Field(const json& obj, const char* key);
// Typed reads of obj[key]: `fallback` when absent or of another type.
std::string Str(const json& obj, const char* key, const std::string& fallback = "");
int64_t Int(const json& obj, const char* key, int64_t fallback = 0);
bool Bool(const json& obj, const char* key, bool fallback = false);
// The array obj[key], or an empty array.
const json& Array(const json& obj, const char* key);
// The object obj[key], or an empty object.
const json& Object(const json& obj, const char* key);

// A schema union ({"as_tensor": {...}}; early files list every member with
// null for the unset ones): the set member's name and value, or {"", null}.
std::pair<std::string, const json*> Union(const json& u);

// ScalarType of the schema (its own numbering: FLOAT = 7, BFLOAT16 = 13,
// UINT16 = 28, ...) as a torch dtype name ("float32"); "unknown(N)" otherwise.
std::string DtypeName(int64_t scalar_type);
// Layout, MemoryFormat of the schema as Python prints them ("torch.strided").
std::string LayoutName(int64_t layout);
std::string MemoryFormatName(int64_t format);

// A SymInt ({"as_int": 4} or {"as_expr": {"expr_str": "Symbol('s77', ...)"}})
// as text: "4", "s77", or the expression.
std::string SymIntText(const json& v);
// Symbol('s77', positive=True, integer=True) -> s77; other text unchanged.
std::string SymbolName(const std::string& expr);

struct TensorMeta {
  std::string dtype;
  std::vector<std::string> sizes;  // "4" or a symbol
  std::vector<int64_t> strides;    // -1 where symbolic
  int64_t storage_offset = 0;
  std::string device;  // "cpu", "cuda:0"
  bool requires_grad = false;
};
TensorMeta ReadTensorMeta(const json& meta);

// Device {"type": "cuda", "index": 0} as "cuda:0".
std::string DeviceText(const json& device);

}  // namespace tsctl::pt2_json
