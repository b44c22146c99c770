// tsctl inspect of an ExecuTorch file, as text and JSON. Every string the
// file holds is escaped (EscapeText; JSON made valid UTF-8).
#include <cstdio>
#include <sstream>

#include "../commands/compat_internal.h"
#include "../text/json_util.h"
#include "../text/units.h"
#include "tsctl/dtype.h"
#include "tsctl/escape.h"
#include "tsctl/pte.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

inline constexpr int kPteSchemaVersion = 1;

std::string ValueText(const PteValue& v) {
  switch (v.kind) {
    case PteValueKind::kTensor: {
      std::string s = EscapeText(v.tensor.dtype) + ShapeText(v.tensor.sizes);
      if (v.tensor.dynamism != PteShapeDynamism::kStatic) s += std::string(" ") + PteShapeDynamismName(v.tensor.dynamism);
      return s;
    }
    case PteValueKind::kInt:
    case PteValueKind::kBool:
    case PteValueKind::kDouble:
    case PteValueKind::kString: return std::string(PteValueKindName(v.kind)) + " " + EscapeText(v.scalar);
    case PteValueKind::kNone: return "None";
    default: return std::string(PteValueKindName(v.kind)) + "[" + std::to_string(v.list_size) + "]";
  }
}

std::string ValuesText(const std::vector<PteValue>& values) {
  std::string s;
  for (const PteValue& v : values) s += (s.empty() ? "" : ", ") + ValueText(v);
  return s.empty() ? "(none)" : s;
}

void MethodText(const PteMethod& m, std::ostream& out) {
  out << "\nMethod " << EscapeText(m.name) << '\n';
  out << "  inputs        " << ValuesText(m.inputs) << '\n';
  out << "  outputs       " << ValuesText(m.outputs) << '\n';
  const PteInstructionCounts& i = m.instructions;
  out << "  instructions  " << i.kernel_calls << " kernel calls, " << i.delegate_calls << " delegate calls, " << i.moves
      << " moves, " << i.jump_false << " jumps, " << i.frees << " frees" << (i.unknown ? ", " + std::to_string(i.unknown) + " unknown" : "")
      << " (" << m.chains << " chain" << (m.chains == 1 ? "" : "s") << ", " << m.values << " values)\n";
  if (!m.non_const_buffer_sizes.empty()) {
    std::string plan;
    for (size_t k = 1; k < m.non_const_buffer_sizes.size(); ++k) {
      plan += (plan.empty() ? "" : ", ") + HumanBytes(static_cast<uint64_t>(std::max<int64_t>(0, m.non_const_buffer_sizes[k])));
    }
    out << "  memory plan   " << (plan.empty() ? "none" : plan) << '\n';
  }
  if (!m.operators.empty()) out << "  operators\n";
  for (const PteOperator& op : m.operators) {
    char line[64];
    std::snprintf(line, sizeof line, "%6llu  ", static_cast<unsigned long long>(op.calls));
    out << "    " << line << EscapeText(PteOperatorKey(op)) << '\n';
  }
  if (!m.delegates.empty()) out << "  delegates\n";
  for (const PteDelegate& d : m.delegates) {
    std::string keys;
    for (const std::string& k : d.compile_spec_keys) keys += (keys.empty() ? "" : ", ") + EscapeText(k);
    out << "    " << EscapeText(d.backend_id) << "  " << HumanBytes(d.bytes) << (d.inline_data ? " inline" : " in segment ")
        << (d.inline_data ? "" : std::to_string(d.index)) << ", " << d.calls << " call" << (d.calls == 1 ? "" : "s")
        << (keys.empty() ? "" : "; compile specs: " + keys) << '\n';
  }
}

void SizesText(const std::vector<PteSizePart>& sizes, uint64_t total, std::ostream& out) {
  out << "\nSize breakdown\n";
  for (const PteSizePart& p : sizes) {
    char line[200];
    const std::string what = std::string(PteSizeKindName(p.kind)) + (p.label.empty() ? "" : " " + EscapeText(p.label)) +
                             (p.in_flatbuffer && p.kind != PteSizeKind::kFlatbuffer && p.kind != PteSizeKind::kHeader ? " (in the flatbuffer)" : "");
    std::snprintf(line, sizeof line, "  %-44s %12s  %5.1f%%\n", what.c_str(), HumanBytes(p.bytes).c_str(),
                  total ? 100.0 * static_cast<double>(p.bytes) / static_cast<double>(total) : 0.0);
    out << line;
  }
  char line[120];
  std::snprintf(line, sizeof line, "  %-44s %12s\n", "total", HumanBytes(total).c_str());
  out << line;
}

void TensorsText(const PteProgram& p, std::ostream& out) {
  if (p.tensors.empty()) return;
  out << "\nStored tensors (" << p.tensors.size() << ")\n";
  size_t shown = 0;
  for (const PteStoredTensor& t : p.tensors) {
    if (++shown > 50) {
      out << "  ... " << p.tensors.size() - 50 << " more (--format json lists them all)\n";
      break;
    }
    out << "  " << (t.tensor.fqn.empty() ? "(value " + std::to_string(t.value_index) + ")" : EscapeText(t.tensor.fqn)) << "  "
        << EscapeText(t.tensor.dtype) << ShapeText(t.tensor.sizes) << "  " << HumanBytes(t.tensor.nbytes) << "  "
        << PteDataLocationName(t.tensor.location) << '\n';
  }
}

void HeaderText(const PteFile& f, const std::string& path, std::ostream& out) {
  out << "file     " << EscapeText(path) << " (" << HumanBytes(f.file_size) << ")\n";
  out << "kind     ExecuTorch " << PteKindName(f.kind) << " (" << f.identifier << ")\n";
  const PteHeader& h = f.header.present || f.kind != PteKind::kBundled ? f.header : f.bundled.program_header;
  if (h.present) {
    out << "header   " << h.magic << ", " << h.length << " B: flatbuffer " << HumanBytes(h.program_size) << ", segments from "
        << h.segment_base_offset;
    if (h.segment_data_size) out << " (" << HumanBytes(*h.segment_data_size) << ")";
    out << '\n';
  } else {
    out << "header   none (no extended header: a program without segments, or of the older layout)\n";
  }
}

nlohmann::json PteTensorJson(const PteTensor& t) {
  return {{"dtype", t.dtype},        {"sizes", t.sizes}, {"dim_order", t.dim_order},
          {"dynamism", PteShapeDynamismName(t.dynamism)}, {"nbytes", t.nbytes}, {"fqn", t.fqn},
          {"location", PteDataLocationName(t.location)}};
}

nlohmann::json PteValueJson(const PteValue& v) {
  nlohmann::json j = {{"kind", PteValueKindName(v.kind)}};
  if (v.kind == PteValueKind::kTensor) j["tensor"] = PteTensorJson(v.tensor);
  if (!v.scalar.empty()) j["value"] = v.scalar;
  if (v.list_size) j["items"] = v.list_size;
  return j;
}

nlohmann::json MethodJson(const PteMethod& m) {
  nlohmann::json j = {{"name", m.name}, {"values", m.values}, {"chains", m.chains},
                      {"non_const_buffer_sizes", m.non_const_buffer_sizes}};
  for (const char* side : {"inputs", "outputs"}) {
    j[side] = nlohmann::json::array();
    for (const PteValue& v : side[0] == 'i' ? m.inputs : m.outputs) j[side].push_back(PteValueJson(v));
  }
  const PteInstructionCounts& i = m.instructions;
  j["instructions"] = {{"kernel_calls", i.kernel_calls}, {"delegate_calls", i.delegate_calls}, {"moves", i.moves},
                       {"jump_false", i.jump_false},     {"frees", i.frees},                   {"unknown", i.unknown}};
  j["operators"] = nlohmann::json::array();
  for (const PteOperator& op : m.operators) {
    j["operators"].push_back({{"name", op.name}, {"overload", op.overload}, {"key", PteOperatorKey(op)}, {"calls", op.calls}});
  }
  j["delegates"] = nlohmann::json::array();
  for (const PteDelegate& d : m.delegates) {
    j["delegates"].push_back({{"backend_id", d.backend_id}, {"inline", d.inline_data}, {"index", d.index}, {"bytes", d.bytes},
                              {"compile_spec_keys", d.compile_spec_keys}, {"calls", d.calls}});
  }
  return j;
}

nlohmann::json SizesJson(const std::vector<PteSizePart>& sizes) {
  nlohmann::json j = nlohmann::json::array();
  for (const PteSizePart& p : sizes) {
    j.push_back({{"kind", PteSizeKindName(p.kind)}, {"label", p.label}, {"in_flatbuffer", p.in_flatbuffer}, {"bytes", p.bytes}});
  }
  return j;
}

nlohmann::json ProgramJson(const PteProgram& p) {
  nlohmann::json j = {{"version", p.version}, {"constant_buffers", p.constant_buffers},
                      {"constant_buffer_bytes", p.constant_buffer_bytes}, {"inline_delegate_blobs", p.inline_delegate_blobs},
                      {"inline_delegate_bytes", p.inline_delegate_bytes}};
  j["methods"] = nlohmann::json::array();
  for (const PteMethod& m : p.methods) j["methods"].push_back(MethodJson(m));
  j["segments"] = nlohmann::json::array();
  for (const PteSegment& s : p.segments) {
    j["segments"].push_back({{"offset", s.offset}, {"size", s.size}, {"file_offset", s.file_offset},
                             {"use", PteSizeKindName(s.use)}, {"label", s.label}});
  }
  j["named_data"] = nlohmann::json::array();
  for (const PteNamedData& n : p.named_data) {
    j["named_data"].push_back({{"key", n.key}, {"segment_index", n.segment_index}, {"bytes", n.bytes}});
  }
  j["tensors"] = nlohmann::json::array();
  for (const PteStoredTensor& t : p.tensors) {
    nlohmann::json tj = PteTensorJson(t.tensor);
    tj["method"] = t.method;
    tj["value_index"] = t.value_index;
    j["tensors"].push_back(tj);
  }
  return j;
}

std::string BundledDtype(int value) {
  const DtypeInfo* d = DtypeByValue(value);
  return d ? d->name : "scalar type " + std::to_string(value);
}

// A bundled test case's value: a tensor's dtype and sizes, a scalar's value.
std::string BundledValueText(const PteBundledValue& v) {
  switch (v.kind) {
    case PteValueKind::kTensor: return BundledDtype(v.scalar_type) + ShapeText(v.sizes);
    case PteValueKind::kInt: return "int " + std::to_string(v.int_value);
    case PteValueKind::kBool: return v.int_value ? "bool true" : "bool false";
    case PteValueKind::kDouble: {
      char b[32];
      std::snprintf(b, sizeof b, "float %.17g", v.double_value);
      return b;
    }
    default: return "a value of a kind the schema lacks";
  }
}

std::string BundledValuesText(const std::vector<PteBundledValue>& values) {
  std::string s;
  for (const PteBundledValue& v : values) s += (s.empty() ? "" : ", ") + BundledValueText(v);
  return s.empty() ? "none" : s;
}

// Each suite's cases, the first 20 of a suite.
void BundledText(const PteBundled& b, std::ostringstream& out) {
  constexpr size_t kShown = 20;
  for (const PteTestSuite& s : b.suites) {
    for (size_t i = 0; i < s.cases.size() && i < kShown; ++i) {
      out << "  " << EscapeText(s.method_name) << " case " << i << ": inputs " << BundledValuesText(s.cases[i].input_values)
          << "; expected " << BundledValuesText(s.cases[i].expected_values) << '\n';
    }
    if (s.cases.size() > kShown) out << "  " << EscapeText(s.method_name) << ": " << s.cases.size() - kShown << " more cases (--format json lists them)\n";
  }
}

nlohmann::json BundledValuesJson(const std::vector<PteBundledValue>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (const PteBundledValue& v : values) {
    switch (v.kind) {
      case PteValueKind::kTensor:
        out.push_back({{"kind", "tensor"}, {"dtype", BundledDtype(v.scalar_type)}, {"shape", v.sizes}, {"dim_order", v.dim_order},
                       {"offset", v.data_offset}, {"bytes", v.data_size}});
        break;
      case PteValueKind::kInt: out.push_back({{"kind", "int"}, {"value", v.int_value}}); break;
      case PteValueKind::kBool: out.push_back({{"kind", "bool"}, {"value", v.int_value != 0}}); break;
      case PteValueKind::kDouble: out.push_back({{"kind", "float"}, {"value", v.double_value}}); break;
      default: out.push_back({{"kind", "unknown"}});
    }
  }
  return out;
}

}  // namespace

// Whether ExecuTorch's runtime (this tsctl's, else the newest data) has what
// the program calls: `tsctl compat` says the rest.
void RuntimeText(const PteProgram& p, std::ostream& out) {
  const PteRuntimeFit fit = FitPteRuntime(p);
  if (fit.runtime.empty()) return;
  out << "runtime  " << fit.runtime << (fit.linked ? " (this tsctl's)" : " (tsctl's data)") << ": ";
  std::vector<std::string> lacks;
  if (!fit.missing_kernels.empty()) {
    std::string names;
    for (size_t i = 0; i < fit.missing_kernels.size() && i < 4; ++i) names += (i ? ", " : "") + EscapeText(fit.missing_kernels[i]);
    if (fit.missing_kernels.size() > 4) names += " and " + std::to_string(fit.missing_kernels.size() - 4) + " more";
    lacks.push_back("no kernel for " + std::to_string(fit.missing_kernels.size()) + " of " + std::to_string(fit.operators) +
                    " operators (" + names + ")");
  }
  for (const std::string& b : fit.missing_backends) lacks.push_back("no backend " + EscapeText(b));
  if (fit.constant_buffer_refused) lacks.push_back("no inline constant_buffer path");
  if (lacks.empty()) {
    std::string has = fit.operators ? "a kernel for each of its " + std::to_string(fit.operators) + " operators" : "";
    if (fit.backends) has += std::string(has.empty() ? "" : " and ") + "each backend it delegates to";
    out << (has.empty() ? std::string("nothing to run (no operator, no delegate)") : "has " + has) << '\n';
    return;
  }
  for (size_t i = 0; i < lacks.size(); ++i) out << (i ? "; " : "") << lacks[i];
  out << " (tsctl compat)\n";
}

std::string RenderPteText(const PteFile& f, const std::string& path) {
  std::ostringstream out;
  HeaderText(f, path, out);
  if (f.kind == PteKind::kFlatTensor) {
    const PteFlatTensor& t = f.flat_tensor;
    out << "data     " << t.tensors.size() << " tensors, " << t.named_data.size() << " named blobs, " << t.segments.size()
        << " segments" << (t.first_layout ? " (the first FT01 layout)" : "") << '\n';
    for (const PteDataTensor& d : t.tensors) {
      out << "  " << EscapeText(d.fqn) << "  " << EscapeText(d.dtype) << ShapeText(d.sizes) << "  " << HumanBytes(d.nbytes) << '\n';
    }
    for (const PteNamedData& n : t.named_data) out << "  " << EscapeText(n.key) << "  " << HumanBytes(n.bytes) << '\n';
    SizesText(f.sizes, f.file_size, out);
    return out.str();
  }
  const PteProgram& p = f.program;
  out << "program  version " << p.version << ", " << p.methods.size() << " method" << (p.methods.size() == 1 ? "" : "s")
      << ", " << p.segments.size() << " segments, " << p.tensors.size() << " stored tensors\n";
  if (f.kind == PteKind::kBundled) {
    size_t cases = 0;
    for (const PteTestSuite& s : f.bundled.suites) cases += s.cases.size();
    out << "bundled  BP08 version " << f.bundled.version << ": " << f.bundled.suites.size() << " test suites, " << cases
        << " cases; the program is " << HumanBytes(f.bundled.program_bytes) << '\n';
    BundledText(f.bundled, out);
  }
  RuntimeText(p, out);
  for (const PteMethod& m : p.methods) MethodText(m, out);
  TensorsText(p, out);
  SizesText(f.sizes, f.file_size, out);
  return out.str();
}

std::string RenderPteJson(const PteFile& f, const std::string& path) {
  nlohmann::json j = {{"schema_version", kPteSchemaVersion}, {"path", path},         {"kind", PteKindName(f.kind)},
                      {"identifier", f.identifier},          {"file_size", f.file_size}};
  const PteHeader& h = f.header;
  j["header"] = {{"present", h.present}, {"magic", h.magic}, {"length", h.length}, {"program_size", h.program_size},
                 {"segment_base_offset", h.segment_base_offset},
                 {"segment_data_size", h.segment_data_size ? nlohmann::json(*h.segment_data_size) : nlohmann::json()}};
  if (f.kind == PteKind::kFlatTensor) {
    nlohmann::json t = nlohmann::json::array();
    for (const PteDataTensor& d : f.flat_tensor.tensors) {
      t.push_back({{"fqn", d.fqn}, {"dtype", d.dtype}, {"sizes", d.sizes}, {"nbytes", d.nbytes}});
    }
    nlohmann::json n = nlohmann::json::array();
    for (const PteNamedData& d : f.flat_tensor.named_data) n.push_back({{"key", d.key}, {"bytes", d.bytes}});
    j["data"] = {{"version", f.flat_tensor.version}, {"tensors", t}, {"named_data", n}};
  } else {
    j["program"] = ProgramJson(f.program);
    const PteRuntimeFit fit = FitPteRuntime(f.program);
    if (!fit.runtime.empty()) {
      j["runtime"] = {{"name", fit.runtime},
                      {"linked", fit.linked},
                      {"missing_kernels", fit.missing_kernels},
                      {"missing_backends", fit.missing_backends},
                      {"constant_buffer_refused", fit.constant_buffer_refused}};
    }
  }
  if (f.kind == PteKind::kBundled) {
    nlohmann::json suites = nlohmann::json::array();
    for (const PteTestSuite& s : f.bundled.suites) {
      nlohmann::json cases = nlohmann::json::array();
      for (const PteTestCase& c : s.cases) {
        cases.push_back({{"inputs", BundledValuesJson(c.input_values)}, {"expected_outputs", BundledValuesJson(c.expected_values)}});
      }
      suites.push_back({{"method", s.method_name}, {"cases", s.cases.size()}, {"test_cases", cases}});
    }
    j["bundled"] = {{"version", f.bundled.version}, {"program_bytes", f.bundled.program_bytes}, {"test_suites", suites}};
  }
  j["sizes"] = SizesJson(f.sizes);
  return DumpJson(std::move(j));
}

}  // namespace tsctl
