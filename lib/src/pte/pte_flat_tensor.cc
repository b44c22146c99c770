// An external data file (.ptd, FT01): named data (keys, segments, tensor
// layouts) in the layout ExecuTorch writes now, or tensors by fully
// qualified name in the first FT01 layout (flat_tensor.fbs says how the two
// are told apart). Segment bytes are placed, never read.
#include "flat_tensor_generated.h"
#include "pte_internal.h"

namespace tsctl::pte_internal {
namespace {

using flatbuffers::uoffset_t;

// A tensor's layout, and its bytes checked against its segment.
PteDataTensor Tensor(const std::string& fqn, int scalar_type, const flatbuffers::Vector<int32_t>* sizes,
                     const flatbuffers::Vector<uint8_t>* dim_order, uint32_t segment, uint64_t offset,
                     const std::vector<PteSegment>& segments, const std::string& name, Budget& budget) {
  PteDataTensor t;
  t.fqn = fqn;
  t.dtype = ScalarTypeName(scalar_type);
  if (sizes) {
    budget.Spend(sizes->size());
    t.sizes.assign(sizes->begin(), sizes->end());
  }
  if (dim_order) {
    budget.Spend(dim_order->size());
    t.dim_order.assign(dim_order->begin(), dim_order->end());
  }
  t.segment_index = segment;
  t.offset = offset;
  t.nbytes = TensorBytes(scalar_type, t.sizes);
  const std::string what = "tensor " + Quote(fqn);
  if (segment >= segments.size()) {
    Fail(name, what + " is in segment " + N(segment) + ", past the " + N(segments.size()) + " segments");
  }
  if (CheckedAdd(offset, t.nbytes, name, what + ": offset + size") > segments[segment].size) {
    Fail(name, what + ": " + N(t.nbytes) + " bytes at offset " + N(offset) + " run past the end of segment " + N(segment) +
                   " (" + N(segments[segment].size) + " bytes)");
  }
  return t;
}

template <typename Root>
std::vector<PteSegment> Segments(const Root& root, const Head& head, uint64_t file_size, const std::string& name,
                                 Budget& budget) {
  RawSegments raw;
  if (const auto* segments = root.segments()) {
    budget.Spend(segments->size());
    for (const ptd_fb::DataSegment* s : *segments) raw.emplace_back(s->offset(), s->size());
  }
  return PlaceSegments(raw, head.header, head.flatbuffer_end, file_size, name);
}

void ReadCurrent(const ptd_fb::FlatTensor& root, const Head& head, const std::string& name, Budget& budget,
                 PteFile& out) {
  PteFlatTensor& ft = out.flat_tensor;
  ft.version = root.version();
  ft.segments = Segments(root, head, out.file_size, name, budget);
  if (!root.named_data()) return;
  for (uoffset_t i = 0; i < root.named_data()->size(); ++i) {
    const ptd_fb::NamedData* d = root.named_data()->Get(i);
    PteNamedData nd{Str(d->key(), budget), d->segment_index(), 0};
    if (nd.segment_index >= ft.segments.size()) {
      Fail(name, "named data " + N(i) + " (" + Quote(nd.key) + ") is in segment " + N(nd.segment_index) + ", past the " +
                     N(ft.segments.size()) + " segments");
    }
    nd.bytes = ft.segments[nd.segment_index].size;
    if (const ptd_fb::TensorLayout* l = d->tensor_layout()) {
      ft.tensors.push_back(Tensor(nd.key, static_cast<int>(l->scalar_type()), l->sizes(), l->dim_order(),
                                  nd.segment_index, 0, ft.segments, name, budget));
    }
    ft.named_data.push_back(std::move(nd));
  }
}

void ReadFirst(const ptd_fb::FlatTensorFirstLayout& root, const Head& head, const std::string& name, Budget& budget,
               PteFile& out) {
  PteFlatTensor& ft = out.flat_tensor;
  ft.first_layout = true;
  ft.version = root.version();
  ft.tensor_alignment = root.tensor_alignment();
  ft.segments = Segments(root, head, out.file_size, name, budget);
  if (!root.tensors()) return;
  for (const ptd_fb::TensorMetadata* m : *root.tensors()) {
    ft.tensors.push_back(Tensor(Str(m->fully_qualified_name(), budget), static_cast<int>(m->scalar_type()), m->sizes(),
                                m->dim_order(), m->segment_index(), m->offset(), ft.segments, name, budget));
  }
}

// Each segment holds tensor data under the first key or name that uses it.
void AttributeTensorSegments(PteFlatTensor& ft) {
  auto use = [&](uint32_t i, const std::string& key) {
    if (i < ft.segments.size() && ft.segments[i].use == PteSizeKind::kUnreferenced) {
      ft.segments[i].use = PteSizeKind::kTensorData;
      ft.segments[i].label = key;
    }
  };
  for (const PteNamedData& d : ft.named_data) use(d.segment_index, d.key);
  for (const PteDataTensor& t : ft.tensors) use(t.segment_index, t.fqn);
}

}  // namespace

void ReadFlatTensorFile(std::string_view flatbuffer, const Head& head, const std::string& name, PteFile& out) {
  const auto* buf = reinterpret_cast<const uint8_t*>(flatbuffer.data());
  Budget budget(flatbuffer.size(), name);
  flatbuffers::Verifier current(buf, flatbuffer.size(), VerifierOptions(flatbuffer.size()));
  // Field 3 (vtable slot 10) is the first layout's segments; the current
  // root has no field 3. (Generated tables are flatbuffers::Table privately.)
  if (ptd_fb::VerifyFlatTensorBuffer(current) &&
      !reinterpret_cast<const flatbuffers::Table*>(ptd_fb::GetFlatTensor(buf))->CheckField(10)) {
    ReadCurrent(*ptd_fb::GetFlatTensor(buf), head, name, budget, out);
  } else {
    flatbuffers::Verifier first(buf, flatbuffer.size(), VerifierOptions(flatbuffer.size()));
    if (!first.VerifyBuffer<ptd_fb::FlatTensorFirstLayout>(ptd_fb::FlatTensorIdentifier())) {
      Fail(name, "the data file's flatbuffer (" + N(flatbuffer.size()) +
                     " bytes) fails the FlatBuffers verifier: an offset, size, alignment or nesting runs out of bounds");
    }
    ReadFirst(*flatbuffers::GetRoot<ptd_fb::FlatTensorFirstLayout>(buf), head, name, budget, out);
  }
  AttributeTensorSegments(out.flat_tensor);
  out.sizes = BreakDown(out.file_size, 8 + uint64_t{head.header.length}, head.flatbuffer_end, SizeParts(),
                        out.flat_tensor.segments, name);
}

}  // namespace tsctl::pte_internal
