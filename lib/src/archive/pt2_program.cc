// One exported program of a .pt2 archive, from its JSON (models/<name>.json
// or the early serialized_exported_program.json): versions, signature,
// symbolic sizes, parameters/buffers/constants and the graph's operators.
#include <algorithm>
#include <map>

#include "pt2_internal.h"
#include "pt2_json.h"
#include "tsctl/error.h"

namespace tsctl::pt2_internal {
namespace {

using namespace pt2_json;

// "torch.ops.aten.linear.default" -> "aten::linear.default"; other targets
// ("_operator.getitem") as they are.
std::string OperatorName(const std::string& target) {
  const std::string prefix = "torch.ops.";
  if (target.rfind(prefix, 0) != 0) return target;
  std::string rest = target.substr(prefix.size());
  size_t dot = rest.find('.');
  return dot == std::string::npos ? rest : rest.substr(0, dot) + "::" + rest.substr(dot + 1);
}

// A user input or output (an Argument union) with its tensor metadata.
Pt2Value ReadValue(const json& arg, const json& tensor_values) {
  Pt2Value v;
  auto [kind, value] = Union(arg);
  if (kind.rfind("as_", 0) == 0) v.kind = kind.substr(3);
  if (kind == "as_tensor" || kind == "as_custom_obj" || kind == "as_token") {
    v.name = Str(*value, "name");
    if (const json* meta = Field(tensor_values, v.name.c_str())) {
      TensorMeta m = ReadTensorMeta(*meta);
      v.dtype = m.dtype;
      v.shape = m.sizes;
      v.device = m.device;
    }
  } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
    auto [inner, x] = Union(*value);
    if (inner == "as_name" && x->is_string()) v.name = x->get<std::string>();
    if (inner != "as_name" && x) v.value = x->dump();
  } else if (value) {
    v.value = value->dump();
  }
  if (v.kind.empty()) v.kind = "unknown";
  return v;
}

// Parameters, buffers, tensor constants and custom objects named by the
// input specs, with the graph's metadata (the config may refine them).
void ReadInputSpecs(const json& specs, const json& tensor_values, Pt2Model& m) {
  for (const json& spec : specs) {
    auto [kind, value] = Union(spec);
    if (!value) continue;
    if (kind == "user_input") {
      m.inputs.push_back(ReadValue(Object(*value, "arg"), tensor_values));
      continue;
    }
    Pt2Tensor t;
    std::string graph_name = Str(Object(*value, "arg"), "name");
    if (kind == "parameter") {
      t.role = "parameter";
      t.name = Str(*value, "parameter_name");
    } else if (kind == "buffer") {
      t.role = "buffer";
      t.name = Str(*value, "buffer_name");
      t.persistent = Bool(*value, "persistent", true);
    } else if (kind == "tensor_constant") {
      t.role = "constant";
      t.name = Str(*value, "tensor_constant_name");
    } else if (kind == "custom_obj") {
      t.role = "custom_obj";
      t.name = Str(*value, "custom_obj_name");
      m.tensors.push_back(t);
      continue;
    } else {
      continue;  // tokens, constant inputs
    }
    if (const json* meta = Field(tensor_values, graph_name.c_str())) SetMeta(ReadTensorMeta(*meta), t);
    m.tensors.push_back(t);
  }
}

void ReadOutputSpecs(const json& specs, const json& tensor_values, Pt2Model& m) {
  for (const json& spec : specs) {
    auto [kind, value] = Union(spec);
    if (!value) continue;
    const json& arg = Object(*value, "arg");
    if (kind == "user_output") {
      m.outputs.push_back(ReadValue(arg, tensor_values));
      continue;
    }
    // A mutation or gradient: which state it writes.
    Pt2Value v;
    v.kind = kind;
    v.name = Str(arg, "name");
    for (const char* key : {"buffer_name", "parameter_name", "user_input_name"}) {
      if (Field(*value, key)) v.value = Str(*value, key);
    }
    m.outputs.push_back(v);
  }
}

// A range bound; absent when null or past int64 (Python's int_oo).
std::optional<int64_t> Bound(const json& range, const char* key) {
  const json* v = Field(range, key);
  if (!v || !v->is_number_integer()) return std::nullopt;
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return v->get<int64_t>();
}

void CountOperators(const json& graph, Pt2Model& m) {
  std::map<std::string, uint64_t> counts;
  for (const json& node : Array(graph, "nodes")) {
    ++m.nodes;
    ++counts[OperatorName(Str(node, "target", "?"))];
  }
  for (const auto& [name, count] : counts) m.operators.push_back({name, count});
}

}  // namespace

void SetMeta(const TensorMeta& meta, Pt2Tensor& t) {
  t.dtype = meta.dtype;
  t.shape.clear();
  for (const std::string& s : meta.sizes) {
    try {
      t.shape.push_back(std::stoll(s));
    } catch (const std::exception&) {
      t.shape.push_back(-1);  // symbolic: not a parameter's
    }
  }
  t.stride = meta.strides;
  t.storage_offset = meta.storage_offset;
  t.device = meta.device;
  t.requires_grad = meta.requires_grad;
  // Sizes come from the archive: a product past 2^64 saturates (and can
  // then match no file) instead of wrapping to a small number.
  t.numel = 1;
  for (int64_t d : t.shape) {
    if (__builtin_mul_overflow(t.numel, d > 0 ? static_cast<uint64_t>(d) : 0, &t.numel)) t.numel = UINT64_MAX;
  }
  if (__builtin_mul_overflow(t.numel, Pt2ElementSize(t.dtype), &t.bytes)) t.bytes = UINT64_MAX;
}

Pt2Model ReadProgram(const Archive& a, const std::string& name, const std::string& record) {
  Pt2Model m;
  m.name = name;
  m.record = record;
  json ep = ReadJson(a, record);
  if (!ep.is_object() || !Field(ep, "graph_module") || !ep["graph_module"].is_object()) {
    throw Error(ErrorKind::kFormat, record + ": not an exported program (no graph_module)");
  }
  if (const json* v = Field(ep, "schema_version")) {
    if (v->is_number_integer()) {
      m.schema_major = v->get<int64_t>();  // early files: one integer
    } else if (v->is_object()) {
      if (Field(*v, "major")) m.schema_major = Int(*v, "major");
      if (Field(*v, "minor")) m.schema_minor = Int(*v, "minor");
    }
  }
  m.torch_version = Str(ep, "torch_version");
  for (const json& v : Array(ep, "verifiers")) {
    if (v.is_string()) m.verifiers.push_back(v.get<std::string>());
  }
  if (m.verifiers.empty() && !Str(ep, "dialect").empty()) m.verifiers.push_back(Str(ep, "dialect"));
  const json& gm = ep["graph_module"];
  const json& graph = Object(gm, "graph");
  const json& tensor_values = Object(graph, "tensor_values");
  const json& signature = Object(gm, "signature");
  ReadInputSpecs(Array(signature, "input_specs"), tensor_values, m);
  ReadOutputSpecs(Array(signature, "output_specs"), tensor_values, m);
  for (const auto& [symbol, range] : Object(ep, "range_constraints").items()) {
    m.symbols.push_back({symbol, Bound(range, "min_val"), Bound(range, "max_val")});
  }
  CountOperators(graph, m);
  return m;
}

}  // namespace tsctl::pt2_internal
