// tsctl diff of ExecuTorch files: what is compared by value, read from each
// file's bytes in chunks: named data blobs (CRC-32) and stored tensors
// (element by element, as CompareElements does for TorchScript's).
#include <algorithm>
#include <map>
#include <optional>

#include "../text/units.h"
#include "diff_internal.h"
#include "tsctl/dtype.h"
#include "tsctl/pte.h"
#include "tsctl/source.h"
#include "tsctl/zip.h"

namespace tsctl::diff_internal {
namespace {

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

// Whether a .ptd's tensor of fully qualified name `key` is the bytes of `blob`.
bool DataTensorNamed(const PteSide& s, const std::string& key, const Blob& blob) {
  const PteFile& f = s.file;
  if (f.kind != PteKind::kFlatTensor) return false;
  for (const PteDataTensor& t : f.flat_tensor.tensors) {
    if (t.fqn != key || t.segment_index >= f.flat_tensor.segments.size()) continue;
    if (s.program_offset + f.flat_tensor.segments[t.segment_index].file_offset + t.offset == blob.offset &&
        t.nbytes == blob.size) {
      return true;
    }
  }
  return false;
}

// The records section's name of a named blob.
std::string NamedDataRecord(const std::string& key) { return "named data " + key; }

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

// tsctl's dtype names (CompareElements) for ExecuTorch's ScalarType names,
// which are c10's (tsctl/dtype.h).
std::string TorchDtype(const std::string& et) {
  const DtypeInfo* d = DtypeByC10(et);
  return d ? d->name : "";
}

// The values of two tensors of one dtype and shape, read side by side in
// chunks from the two files.
void ComparePteValues(const PteSide& a, const Stored& x, const PteSide& b, const Stored& y, const DiffOptions& o,
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

}  // namespace

std::map<std::string, uint64_t> NamedDataSizes(const PteSide& s) {
  std::map<std::string, uint64_t> out;
  for (const auto& [key, blob] : NamedBlobs(s)) out.emplace(NamedDataRecord(key), blob.size);
  return out;
}

// Each named blob by key: added, removed, or of another size or CRC-32.
void DiffNamedData(const PteSide& a, const PteSide& b, DiffResult& r) {
  const auto na = NamedBlobs(a), nb = NamedBlobs(b);
  for (const auto& [key, x] : na) {
    const std::string name = NamedDataRecord(key);
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
      // A .ptd names each tensor's bytes as a blob too: those the parameters
      // section compares by value, and counts there.
      const bool tensor = DataTensorNamed(a, key, x) && DataTensorNamed(b, key, y);
      r.records.push_back({name, ChangeKind::kChanged, {{"crc32", Crc32Hex(ca), Crc32Hex(cb)}},
                           tensor ? "parameters" : "", !tensor});
    }
  }
  for (const auto& [key, y] : nb) {
    if (!na.count(key)) {
      r.records.push_back({NamedDataRecord(key), ChangeKind::kAdded, {{"size", "", std::to_string(y.size)}}, "", true});
    }
  }
}

namespace {

// Each method's delegates by position, as the records section names their
// blobs: "delegate blob forward.delegate[0] (XnnpackBackend)".
std::map<std::string, const PteDelegate*> DelegateBlobs(const PteSide& s) {
  std::map<std::string, const PteDelegate*> out;
  if (s.file.kind == PteKind::kFlatTensor) return out;
  for (const PteMethod& m : s.file.program.methods) {
    for (size_t i = 0; i < m.delegates.size(); ++i) {
      const PteDelegate& d = m.delegates[i];
      out.emplace("delegate blob " + m.name + ".delegate[" + std::to_string(i) + "] (" + d.backend_id + ")", &d);
    }
  }
  return out;
}

}  // namespace

std::map<std::string, uint64_t> DelegateBlobSizes(const PteSide& s) {
  std::map<std::string, uint64_t> out;
  for (const auto& [name, d] : DelegateBlobs(s)) out.emplace(name, d->bytes);
  return out;
}

// A delegate's blob is what its backend runs (XNNPACK's graph, a QNN
// context): two of one size are compared by CRC-32, and two whose compile
// specs have the same keys by their values' CRC-32. Sizes and keys that
// differ are the size breakdown's and the modules section's.
void DiffDelegateBlobs(const PteSide& a, const PteSide& b, DiffResult& r) {
  const auto da = DelegateBlobs(a), db = DelegateBlobs(b);
  for (const auto& [name, x] : da) {
    auto it = db.find(name);
    if (it == db.end()) continue;
    const PteDelegate& y = *it->second;
    if (x->bytes == y.bytes) {
      const uint32_t ca = BlobCrc(*a.source, a.program_offset + x->data_offset, x->bytes);
      const uint32_t cb = BlobCrc(*b.source, b.program_offset + y.data_offset, y.bytes);
      if (ca != cb) r.records.push_back({name, ChangeKind::kChanged, {{"crc32", Crc32Hex(ca), Crc32Hex(cb)}}, "", true});
    }
    if (x->compile_spec_keys == y.compile_spec_keys && x->compile_specs_crc != y.compile_specs_crc) {
      r.records.push_back({name, ChangeKind::kChanged,
                           {{"compile spec values crc32", Crc32Hex(x->compile_specs_crc), Crc32Hex(y.compile_specs_crc)}},
                           "", true});
    }
  }
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
      if (x.sizes != y.sizes) notes.push_back("shape " + ShapeText(x.sizes) + " -> " + ShapeText(y.sizes));
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
    ComparePteValues(a, x, b, y, o, c);
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

}  // namespace tsctl::diff_internal
