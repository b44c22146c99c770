// tsctl diff of two ExecuTorch files, read without ExecuTorch: the sections
// TorchScript archives get, filled from the programs. format: kind,
// identifier, program version, header; records: the size breakdown's parts
// and each named data blob by key (size, CRC-32), each delegate's blob and
// compile spec values (CRC-32);
// modules: each method's signature, delegates, instructions and memory plan;
// parameters: the stored tensors (constants, mutable initial values, a .ptd's
// tensors) by fully qualified name, their bytes compared in place; code: each
// method's instruction chains as tsctl graph prints them; operators: the
// name.overload keys the methods call. constants and extra are not compared:
// the format has no such parts. What is compared by value (named data,
// stored tensors) is in diff_pte_tensors.cc.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "../text/units.h"
#include "diff_internal.h"
#include "tsctl/error.h"
#include "tsctl/pte.h"
#include "tsctl/source.h"
#include "tsctl/text_diff.h"

namespace tsctl {
namespace {

using diff_internal::DiffNamedData;
using diff_internal::DiffStored;
using diff_internal::FinishSections;
using diff_internal::PteSide;
using diff_internal::StartSections;

void AddField(std::vector<FieldChange>& out, const std::string& field, const std::string& a, const std::string& b) {
  if (a != b) out.push_back({field, a, b});
}

std::string HeaderSummary(const PteHeader& h) {
  return h.present ? h.magic + " (" + std::to_string(h.length) + " bytes)" : "none";
}

void DiffPteFormat(const PteFile& a, const PteFile& b, DiffResult& r) {
  AddField(r.format, "kind", PteKindName(a.kind), PteKindName(b.kind));
  AddField(r.format, "identifier", a.identifier, b.identifier);
  AddField(r.format, "header", HeaderSummary(a.header), HeaderSummary(b.header));
  if (a.kind != PteKind::kFlatTensor && b.kind != PteKind::kFlatTensor) {
    AddField(r.format, "program version", std::to_string(a.program.version), std::to_string(b.program.version));
  }
  r.formats_differ = a.kind != b.kind || a.identifier != b.identifier;
}

// The size breakdown by part ("delegate XnnpackBackend", "constants
// (inline)"), bytes summed.
std::map<std::string, uint64_t> SizeParts(const PteFile& f) {
  std::map<std::string, uint64_t> out;
  for (const PteSizePart& p : f.sizes) {
    std::string name = PteSizeKindName(p.kind);
    if (!p.label.empty()) name += " " + p.label;
    if (p.in_flatbuffer && p.kind != PteSizeKind::kFlatbuffer) name += " (inline)";
    out[name] += p.bytes;
  }
  out["total"] = f.file_size;
  return out;
}

void DiffSizes(const PteFile& a, const PteFile& b, DiffResult& r) {
  const auto pa = SizeParts(a), pb = SizeParts(b);
  for (const auto& [name, bytes] : pa) {
    auto it = pb.find(name);
    if (it == pb.end()) {
      r.records.push_back({name, ChangeKind::kRemoved, {{"size", std::to_string(bytes), ""}}, "", true});
    } else if (it->second != bytes) {
      r.records.push_back({name, ChangeKind::kChanged, {{"size", std::to_string(bytes), std::to_string(it->second)}}, "", true});
    }
  }
  for (const auto& [name, bytes] : pb) {
    if (!pa.count(name)) r.records.push_back({name, ChangeKind::kAdded, {{"size", "", std::to_string(bytes)}}, "", true});
  }
}

std::string PteValueDiffText(const PteValue& v) {
  std::string s = PteValueKindName(v.kind);
  if (v.kind == PteValueKind::kTensor) {
    s += " " + v.tensor.dtype + " " + ShapeText(v.tensor.sizes);
    if (v.tensor.dynamism != PteShapeDynamism::kStatic) s += std::string(" ") + PteShapeDynamismName(v.tensor.dynamism);
  } else if (!v.scalar.empty()) {
    s += " " + v.scalar;
  } else if (v.list_size) {
    s += "[" + std::to_string(v.list_size) + "]";
  }
  return s;
}

// Inputs, outputs or delegates, by position.
template <typename T, typename F>
void ByPosition(const std::string& method, const char* what, const std::vector<T>& a, const std::vector<T>& b,
                F text, DiffResult& r) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string path = method + "." + what + "[" + std::to_string(i) + "]";
    if (i >= b.size()) {
      r.modules.push_back({path, what, ChangeKind::kRemoved, {{"value", text(a[i]), ""}}});
    } else if (i >= a.size()) {
      r.modules.push_back({path, what, ChangeKind::kAdded, {{"value", "", text(b[i])}}});
    } else if (text(a[i]) != text(b[i])) {
      r.modules.push_back({path, what, ChangeKind::kChanged, {{"value", text(a[i]), text(b[i])}}});
    }
  }
}

std::string DelegateText(const PteDelegate& d) {
  std::string s = d.backend_id + ", " + std::to_string(d.bytes) + " bytes " +
                  (d.inline_data ? "inline" : "in segment " + std::to_string(d.index)) + ", compile specs [";
  for (size_t i = 0; i < d.compile_spec_keys.size(); ++i) s += (i ? ", " : "") + d.compile_spec_keys[i];
  return s + "]";
}

std::string InstructionsText(const PteMethod& m) {
  const PteInstructionCounts& c = m.instructions;
  return std::to_string(c.kernel_calls) + " kernel calls, " + std::to_string(c.delegate_calls) + " delegate calls, " +
         std::to_string(c.moves) + " moves, " + std::to_string(c.jump_false) + " jumps, " + std::to_string(c.frees) +
         " frees; " + std::to_string(m.chains) + " chains, " + std::to_string(m.values) + " values";
}

void DiffMethod(const PteMethod& a, const PteMethod& b, DiffResult& r) {
  ByPosition(a.name, "input", a.inputs, b.inputs, PteValueDiffText, r);
  ByPosition(a.name, "output", a.outputs, b.outputs, PteValueDiffText, r);
  ByPosition(a.name, "delegate", a.delegates, b.delegates, DelegateText, r);
  std::vector<FieldChange> fields;
  AddField(fields, "instructions", InstructionsText(a), InstructionsText(b));
  AddField(fields, "memory plan", ShapeText(a.non_const_buffer_sizes), ShapeText(b.non_const_buffer_sizes));
  if (!fields.empty()) r.modules.push_back({a.name, "method", ChangeKind::kChanged, fields});
}

std::map<std::string, const PteMethod*> Methods(const PteFile& f) {
  std::map<std::string, const PteMethod*> out;
  if (f.kind == PteKind::kFlatTensor) return out;
  for (const PteMethod& m : f.program.methods) out.emplace(m.name, &m);
  return out;
}

void DiffMethods(const PteFile& a, const PteFile& b, DiffResult& r) {
  const auto ma = Methods(a), mb = Methods(b);
  for (const auto& [name, m] : ma) {
    auto it = mb.find(name);
    if (it == mb.end()) {
      r.modules.push_back({name, "method", ChangeKind::kRemoved, {{"signature", std::to_string(m->inputs.size()) + " inputs, " + std::to_string(m->outputs.size()) + " outputs", ""}}});
    } else {
      DiffMethod(*m, *it->second, r);
    }
  }
  for (const auto& [name, m] : mb) {
    if (!ma.count(name)) {
      r.modules.push_back({name, "method", ChangeKind::kAdded, {{"signature", "", std::to_string(m->inputs.size()) + " inputs, " + std::to_string(m->outputs.size()) + " outputs"}}});
    }
  }
}

void DiffChains(const PteFile& a, const PteFile& b, const DiffOptions& o, DiffResult& r) {
  const auto ma = Methods(a), mb = Methods(b);
  for (const auto& [name, m] : ma) {
    auto it = mb.find(name);
    if (it == mb.end()) {
      r.code.push_back({"chains", "(" + name + ")", ChangeKind::kRemoved, "", ""});
      continue;
    }
    const std::string ga = RenderPteGraph(a, name, false), gb = RenderPteGraph(b, name, false);
    if (ga != gb) r.code.push_back({"chains", "(" + name + ")", ChangeKind::kChanged, UnifiedDiff(ga, gb, o.context_lines), ""});
  }
  for (const auto& [name, m] : mb) {
    if (!ma.count(name)) r.code.push_back({"chains", "(" + name + ")", ChangeKind::kAdded, "", ""});
  }
}

std::vector<std::string> OperatorKeys(const PteFile& f) {
  std::set<std::string> keys;
  for (const auto& [name, m] : Methods(f)) {
    for (const PteOperator& op : m->operators) keys.insert(PteOperatorKey(op));
  }
  return {keys.begin(), keys.end()};
}

void DiffOperatorKeys(const PteFile& a, const PteFile& b, DiffResult& r) {
  const std::vector<std::string> ka = OperatorKeys(a), kb = OperatorKeys(b);
  std::set_difference(kb.begin(), kb.end(), ka.begin(), ka.end(), std::back_inserter(r.operators_added));
  std::set_difference(ka.begin(), ka.end(), kb.begin(), kb.end(), std::back_inserter(r.operators_removed));
}

void NotCompared(DiffResult& r, DiffSection s, const char* why) {
  SectionResult& sr = r.sections[static_cast<int>(s)];
  if (!sr.compared) return;
  sr.compared = false;
  sr.not_compared_reason = why;
}

}  // namespace

namespace diff_internal {

PteSide ReadPteSide(const std::string& path, uint64_t max_input_bytes) {
  PteSide s;
  // Opened once: the values are read from the very file the reader read.
  try {
    s.source = OpenFileSource(path, max_input_bytes);
  } catch (const Error& e) {
    throw Error(e.kind(), path + ": " + e.what(), e.detail());
  }
  s.file = ReadPteSource(*s.source, {.chains = true});
  if (s.file.kind == PteKind::kBundled) s.program_offset = s.file.bundled.program_offset;
  return s;
}

std::map<std::string, uint64_t> PteRecordSizes(const PteSide& s) {
  std::map<std::string, uint64_t> out = SizeParts(s.file);
  for (const auto& [name, bytes] : NamedDataSizes(s)) out[name] = bytes;
  for (const auto& [name, bytes] : DelegateBlobSizes(s)) out[name] = bytes;
  return out;
}

DiffResult DiffPteSides(const PteSide& a, const std::string& path_a, const PteSide& b, const std::string& path_b,
                        const DiffOptions& options) {
  DiffResult r;
  r.path_a = path_a;
  r.path_b = path_b;
  r.kind_a = std::string("executorch-") + PteKindName(a.file.kind);
  r.kind_b = std::string("executorch-") + PteKindName(b.file.kind);
  StartSections(options, r);
  DiffPteFormat(a.file, b.file, r);
  if (options.Enabled(DiffSection::kRecords)) {
    DiffSizes(a.file, b.file, r);
    DiffNamedData(a, b, r);
    DiffDelegateBlobs(a, b, r);
  }
  if (options.Enabled(DiffSection::kModules)) DiffMethods(a.file, b.file, r);
  if (options.Enabled(DiffSection::kParameters)) DiffStored(a, b, options, r);
  if (options.Enabled(DiffSection::kCode)) DiffChains(a.file, b.file, options, r);
  if (options.Enabled(DiffSection::kOperators)) DiffOperatorKeys(a.file, b.file, r);
  NotCompared(r, DiffSection::kConstants, "ExecuTorch files keep their constants among the stored tensors: see parameters");
  NotCompared(r, DiffSection::kExtra, "ExecuTorch files have no extra/ records");
  FinishSections(options, r);
  return r;
}

}  // namespace diff_internal

DiffResult DiffPteFiles(const std::string& path_a, const std::string& path_b, const DiffOptions& options,
                        uint64_t max_input_bytes) {
  const PteSide a = diff_internal::ReadPteSide(path_a, max_input_bytes);
  const PteSide b = diff_internal::ReadPteSide(path_b, max_input_bytes);
  return diff_internal::DiffPteSides(a, path_a, b, path_b, options);
}

}  // namespace tsctl
