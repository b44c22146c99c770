#include "render_pt2.h"

#include <string>

#include "table.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

using nlohmann::json;

json ShapeJson(const std::vector<std::string>& shape) {
  json a = json::array();
  for (const std::string& d : shape) {
    bool digits = !d.empty() && d.find_first_not_of("0123456789") == std::string::npos && d.size() < 19;
    a.push_back(digits ? json(std::stoll(d)) : json(d));
  }
  return a;
}

json ValueJson(const Pt2Value& v) {
  return {{"name", v.name}, {"kind", v.kind}, {"dtype", v.dtype}, {"shape", ShapeJson(v.shape)}, {"device", v.device},
          {"value", v.value}};
}

json Pt2TensorJson(const Pt2Tensor& t) {
  return {{"name", t.name},         {"role", t.role},           {"dtype", t.dtype},
          {"shape", t.shape},       {"stride", t.stride},       {"storage_offset", t.storage_offset},
          {"device", t.device},     {"requires_grad", t.requires_grad}, {"persistent", t.persistent},
          {"numel", t.numel},       {"bytes", t.bytes},         {"file", t.file},
          {"file_present", t.file_present}, {"file_size", t.file_size}, {"use_pickle", t.use_pickle},
          {"shared_with", t.shared_with}, {"in_signature", t.in_signature}};
}

json ModelJson(const Pt2Model& m) {
  json j = {{"name", m.name}, {"record", m.record}, {"torch_version", m.torch_version}, {"verifiers", m.verifiers},
            {"nodes", m.nodes}, {"weights_config", m.weights_config}, {"constants_config", m.constants_config}};
  j["schema_version"] = m.schema_major ? json{{"major", *m.schema_major}, {"minor", m.schema_minor ? json(*m.schema_minor) : json(nullptr)}}
                                       : json(nullptr);
  for (const char* key : {"inputs", "outputs", "tensors", "symbols", "operators"}) j[key] = json::array();
  for (const Pt2Value& v : m.inputs) j["inputs"].push_back(ValueJson(v));
  for (const Pt2Value& v : m.outputs) j["outputs"].push_back(ValueJson(v));
  for (const Pt2Tensor& t : m.tensors) j["tensors"].push_back(Pt2TensorJson(t));
  for (const Pt2Symbol& s : m.symbols) {
    j["symbols"].push_back({{"name", s.name}, {"min", s.min ? json(*s.min) : json(nullptr)}, {"max", s.max ? json(*s.max) : json(nullptr)}});
  }
  for (const OperatorUse& u : m.operators) {
    j["operators"].push_back({{"name", u.name}, {"namespace", OperatorNamespace(u.name)}, {"count", u.count}});
  }
  if (m.sample_inputs.empty()) {
    j["sample_inputs"] = nullptr;
  } else {
    json tensors = json::array();
    for (const Pt2SampleTensor& t : m.sample_tensors) tensors.push_back({{"path", t.path}, {"dtype", t.dtype}, {"shape", t.shape}});
    j["sample_inputs"] = {{"record", m.sample_inputs}, {"size", m.sample_inputs_size}, {"tensors", tensors},
                          {"error", m.sample_inputs_error}};
  }
  return j;
}

std::string Pt2ValueText(const Pt2Value& v) {
  if (v.kind == "tensor") {
    std::string shape;
    for (const std::string& d : v.shape) shape += (shape.empty() ? "" : ", ") + d;
    return v.dtype + " [" + shape + "] " + v.device;
  }
  if (v.kind == "none") return "None";
  if (v.kind.find("mutation") != std::string::npos || v.kind.rfind("gradient", 0) == 0) return "writes " + v.value;
  return v.kind + (v.value.empty() ? "" : " = " + v.value);
}

// "[1, ?, 8]": a dynamic size (negative in the program) as "?".
std::string SymbolicShapeText(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : ", ") + (d < 0 ? std::string("?") : std::to_string(d));
  return "[" + s + "]";
}

void PrintValues(const char* title, const std::vector<Pt2Value>& values, std::ostream& out) {
  out << "  " << title << (values.empty() ? "  (none)" : "") << '\n';
  Table t({"name", "kind", "type"});
  for (const Pt2Value& v : values) t.Add({EscapeText(v.name.empty() ? "-" : v.name), EscapeText(v.kind), EscapeText(Pt2ValueText(v))});
  if (!values.empty()) t.Print(out, "    ");
}

void PrintTensors(const Pt2Model& m, std::ostream& out) {
  out << "  tensors  " << m.tensors.size();
  if (!m.weights_config.empty()) out << " (" << EscapeText(m.weights_config) << (m.constants_config.empty() ? "" : ", " + EscapeText(m.constants_config)) << ")";
  out << '\n';
  if (m.tensors.empty()) return;
  Table t({"name", "role", "dtype", "shape", "size", "file"});
  for (const Pt2Tensor& x : m.tensors) {
    std::string file = x.file.empty() ? "-" : EscapeText(x.file) + (x.file_present ? "" : " (missing)");
    if (!x.shared_with.empty()) file += " (shared with " + EscapeText(x.shared_with) + ")";
    if (x.use_pickle) file += " (pickled)";
    if (!x.in_signature) file += " (not in the signature: unused)";
    t.Add({EscapeText(x.name), EscapeText(x.role), EscapeText(x.dtype), SymbolicShapeText(x.shape), HumanBytes(x.bytes), file});
  }
  t.Print(out, "    ", {4});
}

void PrintModel(const Pt2Model& m, std::ostream& out) {
  out << "\nProgram " << EscapeText(m.name) << "  (" << EscapeText(m.record) << ")\n";
  std::string schema = m.schema_major ? std::to_string(*m.schema_major) + (m.schema_minor ? "." + std::to_string(*m.schema_minor) : "") : "unknown";
  out << "  schema   " << schema << ", torch " << (m.torch_version.empty() ? "unknown" : EscapeText(m.torch_version));
  std::string verifiers;
  for (const std::string& v : m.verifiers) verifiers += (verifiers.empty() ? "" : ", ") + EscapeText(v);
  if (!verifiers.empty()) out << ", dialect " << verifiers;
  out << '\n';
  out << "  graph    " << m.nodes << " nodes, " << m.operators.size() << " distinct targets\n";
  PrintValues("inputs", m.inputs, out);
  PrintValues("outputs", m.outputs, out);
  if (!m.symbols.empty()) {
    out << "  symbols\n";
    for (const Pt2Symbol& s : m.symbols) {
      out << "    " << EscapeText(s.name) << "  " << (s.min ? std::to_string(*s.min) : "-inf") << ".."
          << (s.max ? std::to_string(*s.max) : "inf") << '\n';
    }
  }
  PrintTensors(m, out);
  if (!m.sample_inputs.empty()) {
    out << "  sample inputs  " << EscapeText(m.sample_inputs) << " (" << HumanBytes(m.sample_inputs_size) << ")";
    if (!m.sample_inputs_error.empty()) out << ": " << EscapeText(m.sample_inputs_error);
    out << '\n';
    for (const Pt2SampleTensor& t : m.sample_tensors) out << "    " << EscapeText(t.path) << "  " << EscapeText(t.dtype) << SymbolicShapeText(t.shape) << '\n';
  }
}

}  // namespace

json Pt2ToJson(const Pt2Info& info) {
  json j = {{"layout", info.layout}, {"archive_format", info.archive_format}, {"archive_version", info.archive_version},
            {"notes", info.notes}};
  j["models"] = json::array();
  for (const Pt2Model& m : info.models) j["models"].push_back(ModelJson(m));
  j["aoti"] = json::array();
  for (const Pt2AotiModel& m : info.aoti) {
    json a = {{"name", m.name}, {"metadata_record", m.metadata_record}, {"files", json::array()}, {"metadata", json::object()}};
    for (const auto& [name, size] : m.files) a["files"].push_back({{"name", name}, {"size", size}});
    for (const auto& [key, value] : m.metadata) a["metadata"][key] = value;
    j["aoti"].push_back(a);
  }
  return j;
}

void RenderPt2Text(const Pt2Info& info, std::ostream& out) {
  out << "\n.pt2      " << EscapeText(info.layout) << ", archive_format " << (info.archive_format.empty() ? "(none)" : EscapeText(info.archive_format))
      << ", archive_version " << (info.archive_version.empty() ? "(none)" : EscapeText(info.archive_version)) << '\n';
  for (const Pt2Model& m : info.models) PrintModel(m, out);
  for (const Pt2AotiModel& m : info.aoti) {
    out << "\nAOTInductor model " << EscapeText(m.name) << '\n';
    Table t({"file", "size"});
    for (const auto& [name, size] : m.files) t.Add({EscapeText(name), HumanBytes(size)});
    t.Print(out, "  ", {1});
    if (!m.metadata.empty()) {
      out << "  metadata (" << EscapeText(m.metadata_record) << ")\n";
      for (const auto& [key, value] : m.metadata) out << "    " << EscapeText(key) << " = " << EscapeText(value) << '\n';
    }
  }
  if (!info.notes.empty()) {
    out << "\nNotes\n";
    for (const std::string& n : info.notes) out << "  " << EscapeText(n) << '\n';
  }
}

}  // namespace tsctl
