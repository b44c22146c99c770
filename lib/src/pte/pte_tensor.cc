// Where a program's tensor keeps its bytes (program.fbs's Tensor comment
// upstream): in a .ptd when its extra info says EXTERNAL; nowhere in the file
// when data_buffer_idx is 0; an initial value in mutable_data_segments when
// it has allocation details; else a constant, inline in constant_buffer
// (the layout before 2024-09) or in the constant segment.
#include "pte_program.h"

namespace tsctl::pte_internal {
namespace {

// The tensor's bytes lie inside its segment.
void CheckInSegment(const PteTensor& t, const std::string& where, const ProgramContext& ctx) {
  const std::vector<PteSegment>& segments = ctx.read.segments;
  const uint32_t i = *t.segment_index;
  if (i >= segments.size()) {
    Fail(ctx.name, where + ": its data is in segment " + N(i) + ", past the " + N(segments.size()) + " segments");
  }
  uint64_t end = CheckedAdd(t.segment_offset, t.nbytes, ctx.name, where + ": offset + size");
  if (end > segments[i].size) {
    Fail(ctx.name, where + ": " + N(t.nbytes) + " bytes at offset " + N(t.segment_offset) + " run past the end of segment " +
                       N(i) + " (" + N(segments[i].size) + " bytes)");
  }
}

// CheckInSegment, then where the bytes start in the program.
void PlaceInSegment(PteTensor& t, const std::string& where, const ProgramContext& ctx) {
  CheckInSegment(t, where, ctx);
  t.data_offset = ctx.read.segments[*t.segment_index].file_offset + t.segment_offset;
}

void LocateMutable(const pte_fb::Tensor& t, const std::string& where, const ProgramContext& ctx, PteTensor& out) {
  const auto* extra = t.extra_tensor_info();
  const uint64_t list = extra ? extra->mutable_data_segments_idx() : 0;
  const std::vector<PteSubsegments>& lists = ctx.read.mutable_data_segments;
  if (list >= lists.size()) {
    Fail(ctx.name, where + ": initial value in mutable data segment list " + N(list) + ", past the " + N(lists.size()) +
                       " lists");
  }
  const PteSubsegments& sub = lists[list];
  if (out.data_buffer_idx >= sub.offsets.size()) {
    Fail(ctx.name, where + ": mutable data buffer " + N(out.data_buffer_idx) + ", past the " + N(sub.offsets.size()) +
                       " offsets of mutable data segment list " + N(list));
  }
  out.location = PteDataLocation::kMutable;
  out.segment_index = sub.segment_index;
  out.segment_offset = sub.offsets[out.data_buffer_idx];
  PlaceInSegment(out, where, ctx);
}

void LocateConstant(const std::string& where, const ProgramContext& ctx, PteTensor& out) {
  const uint32_t idx = out.data_buffer_idx;
  if (ctx.read.constant_buffers > 0) {
    if (idx >= ctx.read.constant_buffers) {
      Fail(ctx.name, where + ": constant buffer " + N(idx) + ", past the " + N(ctx.read.constant_buffers) +
                         " constant buffers");
    }
    const pte_fb::Buffer* b = ctx.program.constant_buffer()->Get(idx);
    const uint64_t have = b->storage() ? b->storage()->size() : 0;
    if (out.nbytes > have) {
      Fail(ctx.name, where + ": " + N(out.nbytes) + " bytes in constant buffer " + N(idx) + " of " + N(have) + " bytes");
    }
    out.location = PteDataLocation::kInline;
    if (have > 0) out.data_offset = static_cast<uint64_t>(b->storage()->data() - ctx.base);
    return;
  }
  const std::optional<PteSubsegments>& cs = ctx.read.constant_segment;
  const uint64_t n = cs ? cs->offsets.size() : 0;
  if (idx >= n) {
    Fail(ctx.name, where + ": constant " + N(idx) + ", past the " + N(n) + " offsets of the constant segment");
  }
  out.location = PteDataLocation::kSegment;
  out.segment_index = cs->segment_index;
  out.segment_offset = cs->offsets[idx];
  PlaceInSegment(out, where, ctx);
}

}  // namespace

void LocateTensor(const pte_fb::Tensor& t, const std::string& where, const ProgramContext& ctx, PteTensor& out) {
  const auto* extra = t.extra_tensor_info();
  if (extra && extra->location() == pte_fb::TensorDataLocation::EXTERNAL) {
    out.location = PteDataLocation::kExternal;
    return;
  }
  if (out.data_buffer_idx == 0) return;
  if (t.allocation_info()) {
    LocateMutable(t, where, ctx, out);
  } else {
    LocateConstant(where, ctx, out);
  }
}

}  // namespace tsctl::pte_internal
