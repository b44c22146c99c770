// The report page of a TorchScript archive (and the parts it shares with a
// .pt2: the record size treemap, extra/, warnings), from BuildReport's result.
#include <map>

#include "report_html.h"
#include "tsctl/code_classes.h"
#include "tsctl/report.h"
#include "tsctl/text_util.h"

namespace tsctl::report {

std::string ModuleLabel(const std::string& path) {
  if (path.empty()) return "(root)";
  const size_t first = path.find('.');
  const size_t second = first == std::string::npos ? first : path.find('.', first + 1);
  return path.substr(0, second);
}

namespace {

// Splits "(self, x: Tensor, y: Dict[str, int] = 1)" at its top-level commas.
std::vector<std::string> SplitParameters(const std::string& inner) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (char c : inner) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  for (std::string& p : parts) {
    const size_t b = p.find_first_not_of(' '), e = p.find_last_not_of(' ');
    p = b == std::string::npos ? "" : p.substr(b, e - b + 1);
  }
  return parts;
}

// A method from inspect's signature text "forward(self, x: Tensor) -> Tensor".
Method MethodFromSignature(const std::string& signature) {
  Method m;
  m.signature = signature;
  const size_t open = signature.find('(');
  const size_t arrow = signature.rfind(") -> ");
  m.name = signature.substr(0, open);
  if (open == std::string::npos || arrow == std::string::npos || arrow < open) return m;
  for (const std::string& p : SplitParameters(signature.substr(open + 1, arrow - open - 1))) {
    if (p == "self" || p.empty()) continue;
    const size_t colon = p.find(':');
    Value v{p.substr(0, colon), colon == std::string::npos ? "" : p.substr(colon + 1), "", ""};
    const size_t eq = v.type.find(" = ");
    if (eq != std::string::npos) v.type.resize(eq);
    if (!v.type.empty() && v.type[0] == ' ') v.type.erase(0, 1);
    m.inputs.push_back(v);
  }
  m.outputs.push_back({"", signature.substr(arrow + 5), "", ""});
  return m;
}

void SignatureSection(const ReportContents& r, Page& page) {
  const ArchiveInfo& info = r.info;
  for (const ClassInfo& cls : info.classes) {
    if (!info.module || cls.qualified_name != info.module->type) continue;
    for (const std::string& s : cls.signatures) page.methods.push_back(MethodFromSignature(s));
  }
  // A legacy (model.json) archive has no classes: the root module's methods
  // are the top-level defs of its code record.
  if (page.methods.empty() && info.module && !info.module->code_record.empty()) {
    for (const ReportCode& c : r.code) {
      if (c.record != info.module->code_record && c.record != info.root + "/" + info.module->code_record) continue;
      for (const std::string& s : TopLevelSignatures(c.text)) page.methods.push_back(MethodFromSignature(s));
    }
  }
  for (Method& m : page.methods) {
    if (m.name != "forward" || r.stored_inputs.inputs.empty()) continue;
    const auto& specs = r.stored_inputs.inputs;
    for (size_t i = 0; i < m.inputs.size() && i < specs.size(); ++i) {
      m.inputs[i].dtype = specs[i].dtype;
      m.inputs[i].shape = ShapeText(specs[i].shape);
    }
    m.note = "dtypes and shapes from the example inputs stored in " + r.stored_inputs.source;
  }
  if (page.methods.empty()) {
    for (const std::string& name : info.format.bytecode_methods) page.methods.push_back({name, "", {}, {}, ""});
  }
  page.signature_note = "The root module's methods as the code declares them. TorchScript keeps types, not "
                        "shapes: dtypes and shapes are shown where the archive stores example inputs.";
}

Module FromModuleInfo(const ModuleInfo& info) {
  Module m;
  m.name = info.name;
  m.type = info.type;
  for (const TensorInfo& t : info.tensors) {
    const bool under = !info.path.empty() && t.name.size() > info.path.size() && t.name.compare(0, info.path.size(), info.path) == 0;
    m.tensors.push_back({under ? t.name.substr(info.path.size() + 1) : t.name, t.role,
                         t.dtype + (t.quantized ? " (quantized)" : ""), ShapeText(t.shape), t.numel, t.bytes});
  }
  for (const ModuleInfo& c : info.children) m.children.push_back(FromModuleInfo(c));
  return m;
}

void Modules(const ArchiveInfo& info, Page& page, std::map<std::string, std::string>& key_module) {
  std::vector<const ModuleInfo*> stack;
  if (info.module) {
    page.modules.push_back(FromModuleInfo(*info.module));
    stack.push_back(&*info.module);
  }
  while (!stack.empty()) {
    const ModuleInfo* m = stack.back();
    stack.pop_back();
    for (const TensorInfo& t : m->tensors) key_module.emplace(t.storage_key, ModuleLabel(m->path));
    for (const ModuleInfo& c : m->children) stack.push_back(&c);
  }
  if (!info.constants.empty()) {
    Module constants;
    constants.name = "constants";
    constants.type = "constants.pkl";
    for (const TensorInfo& t : info.constants) {
      constants.tensors.push_back({t.name, t.role, t.dtype, ShapeText(t.shape), t.numel, t.bytes});
      key_module.emplace(t.storage_key, "constants");
    }
    page.modules.push_back(std::move(constants));
  }
  if (!info.module) page.modules_note = "No module tree: the archive's data.pkl holds no module.";
}

void ArchiveSummary(const ReportContents& r, Page& page) {
  const ArchiveInfo& info = r.info;
  const FormatInfo& f = info.format;
  auto add = [&](const std::string& k, const std::string& v) { page.summary.emplace_back(k, v); };
  add("file", info.path);
  add("kind", info.kind + (f.has_bytecode ? " (mobile: bytecode.pkl)" : "") + (f.legacy ? " (model.json layout)" : ""));
  add("size", HumanBytes(info.file_size) + " (" + Grouped(info.file_size) + " bytes)");
  add("root folder", info.root);
  if (f.version) add("format version", std::to_string(*f.version) + " (" + f.version_record + ")");
  if (f.bytecode_version) add("bytecode version", std::to_string(*f.bytecode_version));
  if (!f.producer_name.empty()) add("producer", f.producer_name + " " + f.producer_version);
  uint64_t params = 0, modules = 0;
  if (!page.modules.empty() && info.module) {
    params = page.modules[0].params;
    modules = page.modules[0].count;
  }
  add("modules", Grouped(modules) + (info.module ? " (root " + info.module->type + ")" : ""));
  uint64_t constant_elements = 0;
  for (const TensorInfo& t : info.constants) constant_elements += t.numel;
  add("parameters", Grouped(params) + " elements" +
                        (constant_elements ? ", and " + Grouped(constant_elements) +
                                                 " in constants (constants.pkl: tensors, and those inside packed "
                                                 "operator contexts)"
                                           : std::string()));
  add("tensors", HumanBytes(info.tensor_bytes) + " in tensors, " + HumanBytes(info.storage_bytes) +
                     " of tensor data records");
  add("records", Grouped(info.records.size()) + " (" + Grouped(info.code.size()) + " code, " +
                     Grouped(info.extra.size()) + " extra/)");
  add("operators", Grouped(info.operators.totals.size()) + " distinct");
  if (f.traced_inputs) add("traced inputs", "traced_inputs/ records present");
  page.producer = r.producer;
}

// Where a TorchScript record goes in the treemap: tensor data by the module
// whose tensor uses it (`key_module`: storage key to label).
RecordPlace ClassifyTorchScript(const std::string& n, const std::map<std::string, std::string>& key_module) {
  const size_t slash = n.find('/');
  const std::string dir = slash == std::string::npos ? "" : n.substr(0, slash + 1);
  const auto found = key_module.find(slash == std::string::npos ? n : n.substr(slash + 1));
  const bool data = dir == "data/" || dir == "tensors/" || dir == "constants/";
  if (data && found != key_module.end()) return {found->second == "constants" ? "constants" : "tensors", found->second};
  if (dir == "code/" || dir == "libs/") return {EndsWith(n, ".debug_pkl") ? "debug info" : "code", n};
  if (dir == "extra/") return {"extra/", n};
  if (dir == "constants/" || n == "constants.pkl") return {"constants", n};
  if (EndsWith(n, ".pkl") || n == "model.json") return {"pickles", n};
  if (data) return {"tensors", "(no tensor refers to it)"};
  return {"other", n};
}

}  // namespace

std::vector<Block> RecordBlocks(const ArchiveInfo& info, const std::map<std::string, std::string>& key_module,
                                RecordClassifier classify) {
  std::vector<Block> blocks;
  uint64_t stored = 0;
  for (const RecordInfo& rec : info.records) {
    stored += rec.compressed_size;
    RecordPlace place = classify(rec.name, key_module);
    blocks.push_back({std::move(place.group), std::move(place.label), rec.compressed_size});
  }
  if (info.file_size > stored) {
    blocks.push_back({"ZIP headers", "local headers, central directory, alignment padding", info.file_size - stored});
  }
  return blocks;
}

void ExtraTexts(const ArchiveInfo& info, Page& page) {
  for (const ExtraInfo& x : info.extra) {
    std::string note = x.truncated ? "truncated" : x.error;
    if (x.content.empty() && x.content_type == "binary") note = "binary, not shown";
    page.extra.push_back({"extra/" + x.name, x.size, x.content, x.content_type, note});
  }
  if (info.extra.empty()) page.extra_note = "No extra/ records.";
}

namespace {

Page TorchScriptPage(const ReportContents& r) {
  const ArchiveInfo& info = r.info;
  Page page;
  page.path = info.path;
  std::map<std::string, std::string> key_module;
  Modules(info, page, key_module);
  SumModules(page.modules);
  ArchiveSummary(r, page);
  SignatureSection(r, page);
  for (const OperatorUse& op : info.operators.totals) page.operators.push_back({op.name, op.count});
  page.operators_note = info.operators.totals_source == "bytecode"
                            ? "Calls counted from bytecode.pkl's OP instructions (what the lite interpreter needs)."
                            : "Call sites counted in the code records (infix operators and subscripts not counted).";
  page.sizes = RecordBlocks(info, key_module, ClassifyTorchScript);
  page.sizes_note = "Bytes as stored in the file (a compressed record counts its compressed size); tensor data "
                    "by the module that holds it, two levels deep.";
  for (const ReportCode& c : r.code) {
    std::string note = c.truncated ? "truncated" : c.omitted ? "not shown: the page's code budget is spent" : c.error;
    page.code.push_back({c.record, c.size, c.text, "", note});
  }
  if (r.code.empty()) page.code_note = "No code records.";
  ExtraTexts(info, page);
  page.warnings = info.warnings;
  page.warnings.insert(page.warnings.end(), r.warnings.begin(), r.warnings.end());
  return page;
}

}  // namespace

Page ArchivePage(const ReportContents& report) {
  return report.info.pt2 ? Pt2Page(report) : TorchScriptPage(report);
}

}  // namespace tsctl::report

namespace tsctl {

std::string RenderReportHtml(const ReportContents& report) {
  report::Page page = report::ArchivePage(report);
  page.graph = report.graphs;
  return report::RenderPage(std::move(page));
}

}  // namespace tsctl
