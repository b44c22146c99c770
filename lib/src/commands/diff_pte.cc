// tsctl diff of two ExecuTorch files, read without ExecuTorch: the sections
// TorchScript archives get, filled from the programs. format: kind,
// identifier, program version, header; records: the size breakdown's parts
// and each named data blob by key (size, CRC-32);
// modules: each method's signature, delegates, instructions and memory plan;
// parameters: the stored tensors (constants, mutable initial values, a .ptd's
// tensors) by fully qualified name, their bytes compared in place; code: each
// method's instruction chains as tsctl graph prints them; operators: the
// name.overload keys the methods call. constants and extra are not compared:
// the format has no such parts.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "diff_internal.h"
#include "tsctl/error.h"
#include "tsctl/pte.h"
#include "tsctl/source.h"
#include "tsctl/text_diff.h"
#include "tsctl/zip.h"

namespace tsctl {
namespace {

using diff_internal::FinishSections;
using diff_internal::StartSections;

// One side: the file read with its chains, and its bytes for the values.
struct PteSide {
  std::unique_ptr<ByteSource> source;
  PteFile file;
  uint64_t program_offset = 0;  // of the program in the file (a .bpte's embedded one)
};

PteSide ReadSide(const std::string& path, uint64_t max_input_bytes) {
  PteSide s;
  s.source = OpenFileSource(path, max_input_bytes);
  // A stream is read whole by OpenFileSource: the reader takes those bytes.
  s.file = s.source->Descriptor() >= 0
               ? ReadPte(path, {.chains = true})
               : ReadPteBytes(s.source->ReadString(0, static_cast<size_t>(s.source->Size())), path, {.chains = true});
  if (s.file.kind == PteKind::kBundled) s.program_offset = s.file.bundled.program_offset;
  return s;
}

void Field(std::vector<FieldChange>& out, const std::string& field, const std::string& a, const std::string& b) {
  if (a != b) out.push_back({field, a, b});
}

std::string HeaderText(const PteHeader& h) {
  return h.present ? h.magic + " (" + std::to_string(h.length) + " bytes)" : "none";
}

void DiffFormat(const PteFile& a, const PteFile& b, DiffResult& r) {
  Field(r.format, "kind", PteKindName(a.kind), PteKindName(b.kind));
  Field(r.format, "identifier", a.identifier, b.identifier);
  Field(r.format, "header", HeaderText(a.header), HeaderText(b.header));
  if (a.kind != PteKind::kFlatTensor && b.kind != PteKind::kFlatTensor) {
    Field(r.format, "program version", std::to_string(a.program.version), std::to_string(b.program.version));
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

// Named data (blobs a runtime finds by key, e.g. XNNPACK's weights): where
// each key's bytes are in the file, and how many.
struct Blob {
  uint64_t offset = 0, size = 0;
};

std::map<std::string, Blob> NamedBlobs(const PteSide& s) {
  const PteFile& f = s.file;
  const bool data = f.kind == PteKind::kFlatTensor;
  const std::vector<PteNamedData>& named = data ? f.flat_tensor.named_data : f.program.named_data;
  const std::vector<PteSegment>& segments = data ? f.flat_tensor.segments : f.program.segments;
  std::map<std::string, Blob> out;
  for (const PteNamedData& d : named) {
    if (d.segment_index >= segments.size()) continue;
    const PteSegment& seg = segments[d.segment_index];
    out.emplace(d.key, Blob{s.program_offset + seg.file_offset, seg.size});
  }
  return out;
}

// The CRC-32 of `n` bytes at `offset`, read in chunks.
uint32_t BlobCrc(const ByteSource& src, uint64_t offset, uint64_t n) {
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  uint32_t crc = 0;
  for (uint64_t done = 0; done < n; done += kChunk) {
    const std::string bytes = src.ReadString(offset + done, static_cast<size_t>(std::min(kChunk, n - done)));
    crc = Crc32(bytes.data(), bytes.size(), crc);
  }
  return crc;
}

// Each named blob by key: added, removed, or of another size or CRC-32.
void DiffNamedData(const PteSide& a, const PteSide& b, DiffResult& r) {
  const auto na = NamedBlobs(a), nb = NamedBlobs(b);
  for (const auto& [key, x] : na) {
    const std::string name = "named data " + key;
    auto it = nb.find(key);
    if (it == nb.end()) {
      r.records.push_back({name, ChangeKind::kRemoved, {{"size", std::to_string(x.size), ""}}, "", true});
      continue;
    }
    const Blob& y = it->second;
    if (x.size != y.size) {
      r.records.push_back({name, ChangeKind::kChanged, {{"size", std::to_string(x.size), std::to_string(y.size)}}, "", true});
      continue;
    }
    const uint32_t ca = BlobCrc(*a.source, x.offset, x.size), cb = BlobCrc(*b.source, y.offset, y.size);
    if (ca != cb) {
      r.records.push_back({name, ChangeKind::kChanged, {{"crc32", diff_internal::Crc32Hex(ca), diff_internal::Crc32Hex(cb)}}, "", true});
    }
  }
  for (const auto& [key, y] : nb) {
    if (!na.count(key)) {
      r.records.push_back({"named data " + key, ChangeKind::kAdded, {{"size", "", std::to_string(y.size)}}, "", true});
    }
  }
}

std::string Sizes(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string ValueText(const PteValue& v) {
  std::string s = PteValueKindName(v.kind);
  if (v.kind == PteValueKind::kTensor) {
    s += " " + v.tensor.dtype + " " + Sizes(v.tensor.sizes);
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
  ByPosition(a.name, "input", a.inputs, b.inputs, ValueText, r);
  ByPosition(a.name, "output", a.outputs, b.outputs, ValueText, r);
  ByPosition(a.name, "delegate", a.delegates, b.delegates, DelegateText, r);
  std::vector<FieldChange> fields;
  Field(fields, "instructions", InstructionsText(a), InstructionsText(b));
  Field(fields, "memory plan", Sizes(a.non_const_buffer_sizes), Sizes(b.non_const_buffer_sizes));
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

// A tensor whose bytes a file holds or names.
struct Stored {
  std::string role;  // constant, mutable, external, data (a .ptd's)
  std::string dtype;
  std::vector<int64_t> sizes;
  uint64_t nbytes = 0;
  std::optional<uint64_t> offset;  // in the file, when the bytes are there
};

// By fully qualified name ("<method>.value<N>" for a tensor without one);
// a tensor several methods share counts once.
std::map<std::string, Stored> StoredTensors(const PteSide& s) {
  std::map<std::string, Stored> out;
  const PteFile& f = s.file;
  if (f.kind == PteKind::kFlatTensor) {
    for (const PteDataTensor& t : f.flat_tensor.tensors) {
      std::optional<uint64_t> at;
      if (t.segment_index < f.flat_tensor.segments.size()) at = f.flat_tensor.segments[t.segment_index].file_offset + t.offset;
      out.emplace(t.fqn, Stored{"data", t.dtype, t.sizes, t.nbytes, at});
    }
    return out;
  }
  for (const PteStoredTensor& st : f.program.tensors) {
    const PteTensor& t = st.tensor;
    const std::string name = t.fqn.empty() ? st.method + ".value" + std::to_string(st.value_index) : t.fqn;
    Stored x{PteDataLocationName(t.location), t.dtype, t.sizes, t.nbytes, std::nullopt};
    if (t.location == PteDataLocation::kMutable) x.role = "mutable";
    if (t.location == PteDataLocation::kInline || t.location == PteDataLocation::kSegment) x.role = "constant";
    if (t.location != PteDataLocation::kExternal) x.offset = s.program_offset + t.data_offset;
    out.emplace(name, std::move(x));
  }
  return out;
}

// tsctl's dtype names (CompareElements) for ExecuTorch's ScalarType names.
std::string TorchDtype(const std::string& et) {
  static const std::map<std::string, std::string> kNames = {
      {"Byte", "uint8"},          {"Char", "int8"},        {"Short", "int16"},        {"Int", "int32"},
      {"Long", "int64"},          {"Half", "float16"},     {"Float", "float32"},      {"Double", "float64"},
      {"ComplexHalf", "complex32"}, {"ComplexFloat", "complex64"}, {"ComplexDouble", "complex128"},
      {"Bool", "bool"},           {"QInt8", "qint8"},      {"QUInt8", "quint8"},      {"QInt32", "qint32"},
      {"BFloat16", "bfloat16"},   {"QUInt4x2", "quint4x2"}, {"QUInt2x4", "quint2x4"}};
  auto it = kNames.find(et);
  return it == kNames.end() ? "" : it->second;
}

// The values of two tensors of one dtype and shape, read side by side in
// chunks from the two files.
void CompareValues(const PteSide& a, const Stored& x, const PteSide& b, const Stored& y, const DiffOptions& o,
                   TensorChange& c) {
  const std::string dtype = TorchDtype(x.dtype);
  const uint64_t element = DiffElementSize(dtype);
  if (element == 0 || x.nbytes % element != 0) {
    c.note = "values not compared: no element comparison for " + x.dtype;
    return;
  }
  constexpr uint64_t kChunk = uint64_t{1} << 20;  // a multiple of every element size
  std::string ba, bb;
  for (uint64_t done = 0; done < x.nbytes; done += kChunk) {
    const size_t n = static_cast<size_t>(std::min(kChunk, x.nbytes - done));
    ba = a.source->ReadString(*x.offset + done, n);
    bb = b.source->ReadString(*y.offset + done, n);
    CompareElements(dtype, ba.data(), bb.data(), n / element, o.rtol, o.atol, c.values);
  }
  c.values_compared = true;
}

void DiffStored(const PteSide& a, const PteSide& b, const DiffOptions& o, DiffResult& r) {
  const auto ta = StoredTensors(a), tb = StoredTensors(b);
  uint64_t external = 0;
  for (const auto& [name, x] : ta) {
    auto it = tb.find(name);
    TensorChange c;
    c.name = name;
    c.role = x.role;
    c.dtype_a = x.dtype;
    c.shape_a = x.sizes;
    if (it == tb.end()) {
      c.kind = ChangeKind::kRemoved;
      r.parameters.push_back(std::move(c));
      continue;
    }
    const Stored& y = it->second;
    c.dtype_b = y.dtype;
    c.shape_b = y.sizes;
    if (x.dtype != y.dtype || x.sizes != y.sizes || x.role != y.role) {
      std::vector<std::string> notes;
      if (x.sizes != y.sizes) notes.push_back("shape " + Sizes(x.sizes) + " -> " + Sizes(y.sizes));
      if (x.dtype != y.dtype) notes.push_back("dtype " + x.dtype + " -> " + y.dtype);
      if (x.role != y.role) notes.push_back("role " + x.role + " -> " + y.role);
      for (const std::string& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;
      r.parameters.push_back(std::move(c));
      continue;
    }
    if (!x.offset || !y.offset) {  // both external: the bytes are in .ptd files diff does not read
      ++external;
      continue;
    }
    CompareValues(a, x, b, y, o, c);
    if (!c.values_compared || c.values.differing > 0 || c.values.nan_mismatch) r.parameters.push_back(std::move(c));
  }
  for (const auto& [name, y] : tb) {
    if (ta.count(name)) continue;
    TensorChange c;
    c.name = name;
    c.role = y.role;
    c.kind = ChangeKind::kAdded;
    c.dtype_b = y.dtype;
    c.shape_b = y.sizes;
    r.parameters.push_back(std::move(c));
  }
  if (external) {
    r.warnings.push_back(std::to_string(external) + " external tensors of the same name, dtype and shape: values not "
                         "compared (their bytes are in .ptd files; diff those)");
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

DiffResult DiffPteFiles(const std::string& path_a, const std::string& path_b, const DiffOptions& options,
                        uint64_t max_input_bytes) {
  const PteSide a = ReadSide(path_a, max_input_bytes), b = ReadSide(path_b, max_input_bytes);
  DiffResult r;
  r.path_a = path_a;
  r.path_b = path_b;
  r.kind_a = std::string("executorch-") + PteKindName(a.file.kind);
  r.kind_b = std::string("executorch-") + PteKindName(b.file.kind);
  StartSections(options, r);
  DiffFormat(a.file, b.file, r);
  if (options.Enabled(DiffSection::kRecords)) {
    DiffSizes(a.file, b.file, r);
    DiffNamedData(a, b, r);
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

}  // namespace tsctl
