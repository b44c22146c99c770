#include "tsctl/inspect.h"

#include <cstdio>
#include <functional>
#include <iomanip>
#include <sstream>

#include "../text/json_util.h"
#include "../text/units.h"
#include "render_json.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"
#include "render_pt2.h"
#include "table.h"

namespace tsctl {
namespace {

using nlohmann::json;

json TensorJson(const TensorInfo& t) {
  return {{"name", t.name},       {"role", t.role},
          {"dtype", t.dtype},     {"shape", t.shape},
          {"stride", t.stride},   {"storage_offset", t.storage_offset},
          {"storage_key", t.storage_key}, {"device", t.device},
          {"numel", t.numel},     {"bytes", t.bytes},
          {"requires_grad", t.requires_grad}, {"quantized", t.quantized}};
}

json AttrJson(const AttributeInfo& a) { return {{"name", a.name}, {"type", a.type}, {"value", a.value}}; }

json ModuleJson(const ModuleInfo& m) {
  json j = {{"name", m.name}, {"path", m.path}, {"type", m.type}};
  j["tensors"] = json::array();
  for (const auto& t : m.tensors) j["tensors"].push_back(TensorJson(t));
  j["attributes"] = json::array();
  for (const auto& a : m.attributes) j["attributes"].push_back(AttrJson(a));
  j["children"] = json::array();
  for (const auto& c : m.children) j["children"].push_back(ModuleJson(c));
  return j;
}

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

void PrintModule(const ModuleInfo& m, std::ostream& out, const std::string& indent) {
  out << indent << (m.name.empty() ? "(root)" : m.name) << "  " << m.type << '\n';
  std::string inner = indent + "    ";
  if (!m.tensors.empty()) {
    Table t({"tensor", "role", "dtype", "shape", "device", "size"});
    for (const auto& x : m.tensors) {
      std::string name = x.name.substr(m.path.empty() ? 0 : std::min(x.name.size(), m.path.size() + 1));
      t.Add({name, x.role, x.dtype + (x.requires_grad ? "" : ""), ShapeText(x.shape), x.device, HumanBytes(x.bytes)});
    }
    t.Print(out, inner, {5});
  }
  for (const auto& a : m.attributes) out << inner << a.name << " : " << a.type << " = " << a.value << '\n';
  for (const auto& c : m.children) PrintModule(c, out, indent + "  ");
}

void Escape(std::string& s) { s = EscapeText(s); }
void Escape(std::vector<std::string>& v) {
  for (auto& s : v) Escape(s);
}
void Escape(AttributeInfo& a) {
  Escape(a.name);
  Escape(a.type);
  Escape(a.value);
}
void Escape(TensorInfo& t) {
  Escape(t.name);
  Escape(t.role);
  Escape(t.dtype);
  Escape(t.storage_key);
  Escape(t.device);
}
void Escape(ModuleInfo& m) {
  Escape(m.name);
  Escape(m.path);
  Escape(m.type);
  for (auto& t : m.tensors) Escape(t);
  for (auto& a : m.attributes) Escape(a);
  for (auto& c : m.children) Escape(c);
}

// A copy of `info` whose strings are safe on a terminal (EscapeText); extra/
// text keeps its line breaks.
ArchiveInfo EscapedForText(const ArchiveInfo& info) {
  ArchiveInfo e = info;
  Escape(e.path);
  Escape(e.kind);
  Escape(e.root);
  FormatInfo& f = e.format;
  Escape(f.version_record);
  Escape(f.byteorder);
  Escape(f.serialization_id);
  Escape(f.bytecode_methods);
  Escape(f.producer_name);
  Escape(f.producer_version);
  for (auto& r : e.records) {
    Escape(r.name);
    Escape(r.error);
  }
  if (e.module) Escape(*e.module);
  for (auto& t : e.constants) Escape(t);
  for (auto& a : e.other_constants) Escape(a);
  for (auto& c : e.classes) {
    Escape(c.qualified_name);
    Escape(c.record);
    Escape(c.base);
    Escape(c.methods);
    Escape(c.signatures);
    Escape(c.parameters);
    Escape(c.buffers);
    for (auto& a : c.attributes) Escape(a);
  }
  for (auto& c : e.code) Escape(c.name);
  for (auto& x : e.extra) {
    Escape(x.name);
    Escape(x.error);
    if (x.content_type != "json") x.content = EscapeText(x.content, {.keep_newlines = true});
  }
  for (auto& t : e.totals) {
    Escape(t.dtype);
    Escape(t.device);
  }
  Escape(e.warnings);
  return e;
}

json OperatorsJson(const OperatorList& list) {
  auto uses = [](const std::vector<OperatorUse>& v) {
    json a = json::array();
    for (const auto& u : v) a.push_back({{"name", u.name}, {"namespace", OperatorNamespace(u.name)}, {"count", u.count}});
    return a;
  };
  json j = {{"source", list.totals_source}, {"totals", uses(list.totals)}};
  j["by_namespace"] = json::object();
  for (const auto& [ns, ops] : list.ByNamespace()) {
    uint64_t calls = 0;
    for (const auto& u : ops) calls += u.count;
    j["by_namespace"][ns] = {{"operators", ops.size()}, {"calls", calls}};
  }
  j["methods"] = json::array();
  for (const auto& m : list.methods) {
    j["methods"].push_back({{"method", m.method}, {"source", m.source}, {"operators", uses(m.operators)}});
  }
  return j;
}

// "Operators (from code: 12 distinct, 40 calls)", then one wrapped line per namespace.
void RenderOperators(const OperatorList& list, std::ostream& out) {
  uint64_t calls = 0;
  for (const auto& u : list.totals) calls += u.count;
  out << "\nOperators (from " << list.totals_source << ": " << list.totals.size() << " distinct, " << calls << " calls)\n";
  for (const auto& [ns, ops] : list.ByNamespace()) {
    // Names from a .pt2's targets or a mobile archive's bytecode: the archive's.
    std::string line = "  " + (ns.empty() ? std::string("(none)") : EscapeText(ns)) + " (" + std::to_string(ops.size()) + "):";
    const size_t indent = line.size();
    size_t width = line.size();
    for (size_t i = 0; i < ops.size(); ++i) {
      std::string name = EscapeText(ops[i].name.substr(ns.empty() ? 0 : ns.size() + 2));
      std::string item = " " + name + " x" + std::to_string(ops[i].count) + (i + 1 < ops.size() ? "," : "");
      if (width + item.size() > 100 && width > indent) {
        line += "\n" + std::string(indent, ' ');
        width = indent;
      }
      line += item;
      width += item.size();
    }
    out << line << '\n';
  }
}

// The head of the text report: path, kind, root, format, and counts of
// records and tensor bytes.
void PrintSummary(const ArchiveInfo& info, std::ostream& out) {
  const FormatInfo& f = info.format;
  out << "archive  " << info.path << " (" << HumanBytes(info.file_size) << ")\n";
  out << "kind     " << info.kind << (f.has_bytecode ? " (mobile: bytecode.pkl)" : "") << '\n';
  out << "root     " << (info.root.empty() ? "(none)" : info.root) << '\n';
  std::string fmt = f.version ? "version " + std::to_string(*f.version) + " (" + f.version_record + ")" : "version unknown";
  if (f.legacy) fmt += ", legacy model.json layout (producer " + f.producer_name + " " + f.producer_version + ")";
  if (!f.byteorder.empty()) fmt += ", byteorder " + f.byteorder;
  if (!f.serialization_id.empty()) fmt += ", serialization id " + f.serialization_id;
  if (f.bytecode_version) fmt += ", bytecode version " + std::to_string(*f.bytecode_version);
  if (f.traced_inputs) fmt += ", traced_inputs/ present";
  out << "format   " << fmt << '\n';
  size_t unaligned = 0, bad_crc = 0;
  for (const auto& r : info.records) {
    if (r.name.rfind("data/", 0) == 0 && !r.aligned) ++unaligned;
    if (r.crc_status == "mismatch" || r.crc_status == "error") ++bad_crc;
  }
  out << "records  " << info.records.size() << ", " << unaligned << " data records unaligned, " << bad_crc << " failing CRC\n";
  out << "tensors  " << HumanBytes(info.tensor_bytes) << " in tensors, " << HumanBytes(info.storage_bytes) << " of tensor data records\n";
}

void PrintRecords(const ArchiveInfo& info, std::ostream& out) {
  out << "\nRecords\n";
  Table t({"name", "size", "stored", "method", "crc", "aligned"});
  for (const auto& r : info.records) {
    t.Add({r.name, HumanBytes(r.size), HumanBytes(r.compressed_size),
           r.method == kZipStored ? "stored" : r.method == kZipDeflated ? "deflated" : std::to_string(r.method),
           r.crc_status, r.error.empty() ? (r.aligned ? "yes" : "no") : "error"});
  }
  t.Print(out, "  ", {1, 2});
}

void PrintTotals(const ArchiveInfo& info, std::ostream& out) {
  if (info.totals.empty()) return;
  out << "\nTensors by dtype and device\n";
  Table t({"dtype", "device", "tensors", "elements", "size"});
  for (const auto& x : info.totals) t.Add({x.dtype, x.device, std::to_string(x.tensors), Grouped(x.numel), HumanBytes(x.bytes)});
  t.Print(out, "  ", {2, 3, 4});
}

void PrintConstants(const ArchiveInfo& info, std::ostream& out) {
  if (info.constants.empty() && info.other_constants.empty()) return;
  out << "\nConstants\n";
  for (const auto& c : info.constants) out << "  " << c.name << "  " << c.dtype << ShapeText(c.shape) << "  " << c.device << "  " << HumanBytes(c.bytes) << '\n';
  for (const auto& c : info.other_constants) out << "  " << c.name << "  " << c.value << '\n';
}

// The code records, then each class with its method signatures and Final
// constants.
void PrintCode(const ArchiveInfo& info, std::ostream& out) {
  out << "\nCode\n";
  Table t({"record", "size", "debug"});
  for (const auto& c : info.code) t.Add({c.name, HumanBytes(c.size), c.has_debug_info ? "yes" : "no"});
  t.Print(out, "  ", {1});
  out << "\nClasses\n";
  for (const auto& c : info.classes) {
    out << "  " << c.qualified_name << (c.base.empty() ? "" : "(" + c.base + ")") << '\n';
    for (const auto& signature : c.signatures) out << "    def " << signature << '\n';
    for (const auto& a : c.attributes) {
      if (a.type.rfind("Final[", 0) == 0) out << "    constant: " << a.name << " : " << a.type << " = " << a.value << '\n';
    }
  }
}

// Each extra/ record with its content, JSON pretty-printed, behind "    | ".
void PrintExtraFiles(const ArchiveInfo& info, std::ostream& out) {
  out << "\nExtra files";
  if (info.extra.empty()) out << "  (none)";
  out << '\n';
  for (const auto& x : info.extra) {
    out << "  " << x.name << "  " << HumanBytes(x.size) << "  " << x.content_type << (x.truncated ? " (truncated)" : "") << '\n';
    if (!x.content.empty()) {
      std::string shown = x.content;
      if (x.content_type == "json") {
        auto parsed = nlohmann::json::parse(x.content, nullptr, false);
        if (!parsed.is_discarded()) shown = DumpJson(parsed, 2);
        shown = EscapeText(shown, {.keep_newlines = true});
      }
      std::istringstream lines(shown);
      std::string line;
      while (std::getline(lines, line)) out << "    | " << line << '\n';
    }
    if (!x.error.empty()) out << "    error: " << x.error << '\n';
  }
}

}  // namespace

json ToJson(const ArchiveInfo& info) {
  json j;
  j["schema_version"] = kInspectSchemaVersion;
  j["path"] = info.path;
  j["file_size"] = info.file_size;
  j["kind"] = info.kind;
  j["root"] = info.root;
  const FormatInfo& f = info.format;
  j["format"] = {{"version", Opt(f.version)},
                 {"version_record", f.version_record},
                 {"byteorder", f.byteorder},
                 {"serialization_id", f.serialization_id},
                 {"constants_pkl", f.has_constants_pkl},
                 {"bytecode", f.has_bytecode},
                 {"bytecode_version", Opt(f.bytecode_version)},
                 {"bytecode_methods", f.bytecode_methods},
                 {"legacy", f.legacy},
                 {"producer_name", f.producer_name},
                 {"producer_version", f.producer_version},
                 {"traced_inputs", f.traced_inputs}};
  j["records"] = json::array();
  for (const auto& r : info.records) {
    j["records"].push_back({{"name", r.name},
                            {"header_offset", r.header_offset},
                            {"data_offset", r.data_offset},
                            {"size", r.size},
                            {"compressed_size", r.compressed_size},
                            {"method", r.method == kZipStored ? "stored" : r.method == kZipDeflated ? "deflated" : std::to_string(r.method)},
                            {"crc32", r.crc32},
                            {"crc", r.crc_status},
                            {"aligned", r.aligned},
                            {"error", r.error}});
  }
  j["module"] = info.module ? ModuleJson(*info.module) : json(nullptr);
  j["constants"] = json::array();
  for (const auto& t : info.constants) j["constants"].push_back(TensorJson(t));
  j["other_constants"] = json::array();
  for (const auto& a : info.other_constants) j["other_constants"].push_back(AttrJson(a));
  j["classes"] = json::array();
  for (const auto& c : info.classes) {
    json cj = {{"name", c.qualified_name}, {"record", c.record}, {"base", c.base},
               {"methods", c.methods},     {"signatures", c.signatures}, {"parameters", c.parameters}, {"buffers", c.buffers}};
    cj["attributes"] = json::array();
    for (const auto& a : c.attributes) cj["attributes"].push_back(AttrJson(a));
    j["classes"].push_back(cj);
  }
  j["code"] = json::array();
  for (const auto& c : info.code) {
    j["code"].push_back({{"name", c.name}, {"size", c.size}, {"compressed_size", c.compressed_size}, {"debug_info", c.has_debug_info}});
  }
  j["operators"] = OperatorsJson(info.operators);
  j["extra"] = json::array();
  for (const auto& x : info.extra) {
    json xj = {{"name", x.name}, {"size", x.size}, {"content_type", x.content_type}, {"truncated", x.truncated}};
    if (x.content_type == "json") {
      xj["content"] = json::parse(x.content, nullptr, false);
    } else if (x.content_type == "text") {
      xj["content"] = x.content;
    } else {
      xj["content"] = nullptr;
    }
    if (!x.error.empty()) xj["error"] = x.error;
    j["extra"].push_back(xj);
  }
  j["totals"] = json::array();
  for (const auto& t : info.totals) {
    j["totals"].push_back({{"dtype", t.dtype}, {"device", t.device}, {"tensors", t.tensors}, {"numel", t.numel}, {"bytes", t.bytes}});
  }
  j["tensor_bytes"] = info.tensor_bytes;
  j["storage_bytes"] = info.storage_bytes;
  j["warnings"] = info.warnings;
  if (info.pt2) j["pt2"] = Pt2ToJson(*info.pt2);
  // Archive strings that are not UTF-8 get "\xdd" escapes (see escape.h).
  MakeJsonUtf8(j);
  return j;
}

void RenderText(const ArchiveInfo& raw, std::ostream& out, const TextOptions& options) {
  // Every string from the archive, escaped once for the terminal.
  const ArchiveInfo info = EscapedForText(raw);
  PrintSummary(info, out);
  if (options.show_records) PrintRecords(info, out);
  if (raw.pt2) RenderPt2Text(*raw.pt2, out);
  if (info.module) {
    out << "\nModules\n";
    PrintModule(*info.module, out, "  ");
  }
  PrintTotals(info, out);
  PrintConstants(info, out);
  if (options.show_code && !info.code.empty()) PrintCode(info, out);
  if (!info.operators.totals.empty()) RenderOperators(info.operators, out);
  const FormatInfo& f = info.format;
  if (f.has_bytecode && !f.bytecode_methods.empty()) {
    out << "\nBytecode methods\n";
    for (const auto& m : f.bytecode_methods) out << "  " << m << '\n';
  }
  PrintExtraFiles(info, out);
  if (!info.warnings.empty()) {
    out << "\nWarnings\n";
    for (const auto& w : info.warnings) out << "  " << w << '\n';
  }
}

std::string RenderJson(const ArchiveInfo& info) { return DumpJson(ToJson(info)); }

}  // namespace tsctl
