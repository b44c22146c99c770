// Parameters, buffers and constants: matched by name, then compared by
// dtype, shape and (streaming both storages side by side) values.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "../text/units.h"
#include "diff_internal.h"
#include "tsctl/error.h"
#include "tsctl/record_reader.h"

namespace tsctl::diff_internal {
namespace {

constexpr uint64_t kChunkBytes = 1 << 20;       // per side, when streaming
constexpr uint64_t kMaxGatherBytes = 16 << 20;  // per side, for strided views

// The record holding a tensor's storage, or null.
const ZipEntry* StorageRecord(const Side& archive, const TensorInfo& t) {
  if (t.storage_key.empty()) return nullptr;
  const char* dirs[] = {t.role == "constant" ? "constants/" : "data/", "data/", "constants/", "tensors/", ""};
  for (const char* dir : dirs) {
    if (const ZipEntry* e = archive.Find(dir + t.storage_key)) return e;
  }
  return nullptr;
}

bool Contiguous(const TensorInfo& t) {
  if (t.stride.size() != t.shape.size()) return false;
  int64_t expect = 1;
  for (size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] != 1 && t.stride[i] != expect) return false;
    expect *= t.shape[i];
  }
  return true;
}

// One past the largest element index the view touches, or -1 if a stride is
// negative or the arithmetic overflows.
int64_t Extent(const TensorInfo& t) {
  if (t.storage_offset < 0) return -1;
  if (t.numel == 0) return t.storage_offset;
  if (t.stride.size() != t.shape.size()) return -1;
  int64_t last = t.storage_offset;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    int64_t step = 0;
    if (t.stride[i] < 0 || t.shape[i] < 1 || __builtin_mul_overflow(t.shape[i] - 1, t.stride[i], &step) ||
        __builtin_add_overflow(last, step, &last)) {
      return -1;
    }
  }
  return last == INT64_MAX ? -1 : last + 1;
}

// Reads the elements of a strided view into a contiguous buffer.
std::string Gather(const Archive& archive, const ZipEntry& e, const TensorInfo& t, uint64_t elem) {
  RecordReader reader(archive.source(), e);
  reader.Skip(static_cast<uint64_t>(t.storage_offset) * elem);
  uint64_t span = static_cast<uint64_t>(Extent(t) - t.storage_offset) * elem;
  std::string raw(static_cast<size_t>(span), '\0');
  reader.ReadExactly(raw.data(), raw.size());
  std::string out;
  out.reserve(static_cast<size_t>(t.numel * elem));
  std::vector<int64_t> idx(t.shape.size(), 0);
  for (uint64_t n = 0; n < t.numel; ++n) {
    uint64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += static_cast<uint64_t>(idx[d] * t.stride[d]);
    out.append(raw, static_cast<size_t>(off * elem), static_cast<size_t>(elem));
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Compares the values of two tensors of the same dtype and shape.
void CompareValues(const Side& a, const TensorInfo& ta, const Side& b, const TensorInfo& tb,
                   const DiffOptions& options, TensorChange& change) {
  const ZipEntry* ea = StorageRecord(a, ta);
  const ZipEntry* eb = StorageRecord(b, tb);
  if (!ea || !eb) {
    change.note = std::string("values not compared: no storage record for key '") +
                  (ea ? tb.storage_key : ta.storage_key) + "' in " + (ea ? "B" : "A");
    return;
  }
  if (!options.exact && ea->crc32 == eb->crc32 && ea->uncompressed_size == eb->uncompressed_size &&
      ta.storage_offset == tb.storage_offset && ta.stride == tb.stride) {
    return;  // same bytes (by size and CRC-32): equal without reading
  }
  const uint64_t elem = DiffElementSize(ta.dtype);
  if (elem == 0) {
    change.note = "values not compared: unknown dtype " + ta.dtype;
    return;
  }
  int64_t xa = Extent(ta), xb = Extent(tb);
  for (auto [x, e, side] : {std::tuple{xa, ea, "A"}, std::tuple{xb, eb, "B"}}) {
    uint64_t bytes = 0;
    if (x < 0 || __builtin_mul_overflow(static_cast<uint64_t>(x), elem, &bytes) || bytes > e->uncompressed_size) {
      change.note = std::string("values not compared: the view lies past its storage record in ") + side;
      return;
    }
  }
  change.values_compared = true;
  ValueStats& s = change.values;
  if (ta.numel == 0) return;
  if (Contiguous(ta) && Contiguous(tb)) {
    RecordReader ra(a.archive.source(), *ea), rb(b.archive.source(), *eb);
    ra.Skip(static_cast<uint64_t>(ta.storage_offset) * elem);
    rb.Skip(static_cast<uint64_t>(tb.storage_offset) * elem);
    const uint64_t per_chunk = std::max<uint64_t>(1, kChunkBytes / elem);
    std::string ba(static_cast<size_t>(per_chunk * elem), '\0'), bb(ba.size(), '\0');
    for (uint64_t done = 0; done < ta.numel;) {
      uint64_t n = std::min(per_chunk, ta.numel - done);
      ra.ReadExactly(ba.data(), static_cast<size_t>(n * elem));
      rb.ReadExactly(bb.data(), static_cast<size_t>(n * elem));
      CompareElements(ta.dtype, ba.data(), bb.data(), n, options.rtol, options.atol, s);
      done += n;
    }
    return;
  }
  for (const auto& [t, x] : {std::pair{&ta, xa}, std::pair{&tb, xb}}) {
    if (static_cast<uint64_t>(x - t->storage_offset) * elem > kMaxGatherBytes) {
      change.values_compared = false;
      change.note = "values not compared: a strided view spanning more than 16 MiB";
      return;
    }
  }
  std::string ga = Gather(a.archive, *ea, ta, elem), gb = Gather(b.archive, *eb, tb, elem);
  CompareElements(ta.dtype, ga.data(), gb.data(), ta.numel, options.rtol, options.atol, s);
}

TensorChange DescribeChange(const TensorInfo* ta, const TensorInfo* tb, ChangeKind kind) {
  TensorChange c;
  const TensorInfo& any = ta ? *ta : *tb;
  c.name = any.name;
  c.role = any.role;
  c.kind = kind;
  if (ta) {
    c.dtype_a = ta->dtype;
    c.shape_a = ta->shape;
  }
  if (tb) {
    c.dtype_b = tb->dtype;
    c.shape_b = tb->shape;
  }
  return c;
}

}  // namespace

void DiffTensorLists(const Side& a, const std::vector<const TensorInfo*>& ta, const Side& b,
                     const std::vector<const TensorInfo*>& tb, const DiffOptions& options,
                     std::vector<TensorChange>& out) {
  std::map<std::string, const TensorInfo*> in_b;
  for (const TensorInfo* t : tb) in_b.emplace(t->name, t);
  std::map<std::string, const TensorInfo*> in_a;
  for (const TensorInfo* t : ta) in_a.emplace(t->name, t);
  for (const TensorInfo* x : ta) {
    if (in_a[x->name] != x) continue;  // a duplicate name: the first one counts
    auto it = in_b.find(x->name);
    if (it == in_b.end()) {
      out.push_back(DescribeChange(x, nullptr, ChangeKind::kRemoved));
      continue;
    }
    const TensorInfo* y = it->second;
    TensorChange c = DescribeChange(x, y, ChangeKind::kChanged);
    std::vector<std::string> notes;
    if (x->role != y->role) notes.push_back("role " + x->role + " -> " + y->role);
    if (x->requires_grad != y->requires_grad) {
      notes.push_back(std::string("requires_grad ") + (x->requires_grad ? "true" : "false") + " -> " +
                      (y->requires_grad ? "true" : "false"));
    }
    if (x->device != y->device) notes.push_back("device " + x->device + " -> " + y->device);
    bool differs = !notes.empty();
    if (x->dtype != y->dtype || x->shape != y->shape) {
      differs = true;
      if (x->dtype != y->dtype) notes.insert(notes.begin(), "dtype " + x->dtype + " -> " + y->dtype);
      if (x->shape != y->shape) notes.insert(notes.begin(), "shape " + ShapeText(x->shape) + " -> " + ShapeText(y->shape));
    } else {
      try {
        CompareValues(a, *x, b, *y, options, c);
      } catch (const Error& e) {
        c.values_compared = false;
        c.note = std::string("values not compared: ") + e.what();
      }
      if (c.values.differing > 0 || c.values.nan_mismatch || !c.note.empty()) differs = true;
    }
    for (const std::string& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;
    if (differs) out.push_back(std::move(c));
  }
  for (const TensorInfo* y : tb) {
    if (in_b[y->name] == y && !in_a.count(y->name)) out.push_back(DescribeChange(nullptr, y, ChangeKind::kAdded));
  }
}

}  // namespace tsctl::diff_internal
