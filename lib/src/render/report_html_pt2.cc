// The report page of a .pt2 (an exported program, an AOTInductor package or
// the early layout), from BuildReport's result.
#include <map>

#include "report_html.h"
#include "tsctl/text_util.h"

namespace tsctl::report {
namespace {

std::string SymbolicShape(const std::vector<std::string>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + shape[i];
  return s + "]";
}

Value FromPt2Value(const Pt2Value& v) {
  const bool tensor = v.kind == "tensor";
  return {v.name, v.kind + (v.value.empty() ? "" : " = " + v.value) + (v.device.empty() ? "" : " on " + v.device),
          v.dtype, tensor ? SymbolicShape(v.shape) : ""};
}

// Where a .pt2 record goes in the treemap: weights by the module of the
// tensor stored there (`key_module`: record name to label), the compiled .so
// apart from the rest of the AOTInductor files.
RecordPlace ClassifyPt2(const std::string& n, const std::map<std::string, std::string>& key_module) {
  const auto found = key_module.find(n);
  if (found != key_module.end()) return {"weights", found->second};
  if (n.rfind("data/aotinductor/", 0) == 0) {
    return {EndsWith(n, ".so") ? "compiled .so" : "AOTInductor files", n};
  }
  if (n.rfind("models/", 0) == 0 || n == "serialized_exported_program.json") return {"program", n};
  if (n.rfind("data/weights/", 0) == 0) return {"weights", n};
  if (n.rfind("data/constants/", 0) == 0 || n == "serialized_constants.json") return {"constants", n};
  if (n.rfind("data/sample_inputs/", 0) == 0) return {"sample inputs", n};
  if (n.rfind("extra/", 0) == 0) return {"extra/", n};
  if (n == "serialized_state_dict.json") return {"weights", n};
  return {"other", n};
}

void Pt2Summary(const ReportContents& r, const Pt2Info& pt2, Page& page) {
  const ArchiveInfo& info = r.info;
  auto add = [&](const std::string& k, const std::string& v) { page.summary.emplace_back(k, v); };
  add("file", info.path);
  add("kind", info.kind + " (" + pt2.layout + ")");
  add("size", HumanBytes(info.file_size) + " (" + Grouped(info.file_size) + " bytes)");
  add("archive format", pt2.archive_format + (pt2.archive_version.empty() ? "" : " version " + pt2.archive_version));
  add("records", Grouped(info.records.size()));
  for (const Pt2Model& m : pt2.models) {
    std::string v;
    if (m.schema_major) v += "schema " + std::to_string(*m.schema_major) + "." + std::to_string(m.schema_minor.value_or(0));
    if (!m.torch_version.empty()) v += (v.empty() ? "" : ", ") + std::string("torch ") + m.torch_version;
    v += (v.empty() ? "" : ", ") + Grouped(m.nodes) + " call nodes, " + Grouped(m.tensors.size()) + " tensors";
    add("program: " + m.name, v);
  }
  for (const Pt2AotiModel& m : pt2.aoti) {
    uint64_t bytes = 0;
    for (const auto& [name, size] : m.files) bytes += size;
    add("AOTInductor: " + m.name, Grouped(m.files.size()) + " files, " + HumanBytes(bytes));
    for (const auto& [key, value] : m.metadata) add(key, value);
  }
  for (const std::string& note : pt2.notes) add("note", note);
  page.producer = r.producer;
}

void Programs(const Pt2Info& pt2, Page& page, std::map<std::string, std::string>& key_module) {
  std::vector<Tensor> tensors;
  for (const Pt2Model& m : pt2.models) {
    Method method{m.name, "", {}, {}, ""};
    for (const Pt2Value& v : m.inputs) method.inputs.push_back(FromPt2Value(v));
    for (const Pt2Value& v : m.outputs) method.outputs.push_back(FromPt2Value(v));
    for (const Pt2Symbol& s : m.symbols) {
      method.note += (method.note.empty() ? "Symbolic sizes: " : "; ") + s.name + " in [" +
                     (s.min ? std::to_string(*s.min) : "-inf") + ", " + (s.max ? std::to_string(*s.max) : "inf") + "]";
    }
    page.methods.push_back(std::move(method));
    const std::string prefix = pt2.models.size() > 1 ? m.name + "." : "";
    for (const Pt2Tensor& t : m.tensors) {
      tensors.push_back({prefix + t.name, t.role, t.dtype, ShapeText(t.shape), t.numel, t.bytes});
      const size_t dot = t.name.rfind('.');
      if (!t.file.empty()) key_module.emplace(t.file, ModuleLabel(dot == std::string::npos ? "" : t.name.substr(0, dot)));
    }
    for (const OperatorUse& op : m.operators) page.operators.push_back({op.name, op.count});
  }
  if (!tensors.empty()) {
    page.modules = ModulesFromNames(std::move(tensors));
    page.modules[0].type = "exported program";
  }
  page.modules_note = "A .pt2 keeps no module objects: the tree is built from the parameters', buffers' and "
                      "constants' dotted names.";
  page.signature_note = "Each program's user inputs and outputs, from its graph signature.";
  page.operators_note = "Call nodes of the programs' graphs, by operator and overload.";
  if (pt2.models.empty() && !pt2.aoti.empty()) {
    page.signature_note = "An AOTInductor package without a program: its inputs are known only to the compiled code.";
    page.operators_note = "An AOTInductor package without a program: the operators are compiled into the .so.";
  }
}

}  // namespace

Page Pt2Page(const ReportContents& r) {
  const ArchiveInfo& info = r.info;
  const Pt2Info& pt2 = *info.pt2;
  Page page;
  page.path = info.path;
  std::map<std::string, std::string> key_module;
  Programs(pt2, page, key_module);
  Pt2Summary(r, pt2, page);
  page.sizes = RecordBlocks(info, key_module, ClassifyPt2);
  page.sizes_note = "Bytes as stored in the file; weights by the module of the tensor stored in each record, two "
                    "levels deep.";
  page.code_note = "A .pt2 holds no TorchScript code; its program is a graph (tsctl graph prints it).";
  ExtraTexts(info, page);
  page.warnings = info.warnings;
  page.warnings.insert(page.warnings.end(), pt2.warnings.begin(), pt2.warnings.end());
  page.warnings.insert(page.warnings.end(), r.warnings.begin(), r.warnings.end());
  return page;
}

}  // namespace tsctl::report
