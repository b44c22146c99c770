// A program (ET12): the FlatBuffers verifier over its flatbuffer, then the
// program-level tables (segments, constants, mutable data, named data), its
// methods, what uses each segment, and the size breakdown.
#include "pte_program.h"

namespace tsctl::pte_internal {
namespace {

using flatbuffers::uoffset_t;

const pte_fb::Program& Verify(std::string_view flatbuffer, const std::string& name) {
  const auto* buf = reinterpret_cast<const uint8_t*>(flatbuffer.data());
  flatbuffers::Verifier v(buf, flatbuffer.size(), VerifierOptions(flatbuffer.size()));
  if (!pte_fb::VerifyProgramBuffer(v)) {
    Fail(name, "the program's flatbuffer (" + N(flatbuffer.size()) +
                   " bytes) fails the FlatBuffers verifier: an offset, size, alignment or nesting runs out of bounds");
  }
  return *pte_fb::GetProgram(buf);
}

PteSubsegments Subsegments(const pte_fb::SubsegmentOffsets& s, Budget& budget) {
  PteSubsegments out;
  out.segment_index = s.segment_index();
  out.offsets = Wide(s.offsets(), budget);
  return out;
}

// Constant buffers and delegate blobs inside the flatbuffer; the sizes of
// the blobs, for the breakdown.
std::vector<uint64_t> ReadInline(const pte_fb::Program& p, PteProgram& out) {
  if (const auto* buffers = p.constant_buffer()) {
    out.constant_buffers = buffers->size();
    for (const pte_fb::Buffer* b : *buffers) out.constant_buffer_bytes += b->storage() ? b->storage()->size() : 0;
  }
  std::vector<uint64_t> blobs;
  if (const auto* data = p.backend_delegate_data()) {
    for (const pte_fb::BackendDelegateInlineData* d : *data) blobs.push_back(d->data() ? d->data()->size() : 0);
  }
  out.inline_delegate_blobs = blobs.size();
  for (uint64_t b : blobs) out.inline_delegate_bytes += b;
  return blobs;
}

void ReadSegments(const pte_fb::Program& p, const Head& head, uint64_t file_size, const std::string& name,
                  Budget& budget, PteProgram& out) {
  RawSegments raw;
  if (const auto* segments = p.segments()) {
    budget.Spend(segments->size());
    for (const pte_fb::DataSegment* s : *segments) raw.emplace_back(s->offset(), s->size());
  }
  out.segments = PlaceSegments(raw, head.header, head.flatbuffer_end, file_size, name);
  if (const auto* cs = p.constant_segment()) out.constant_segment = Subsegments(*cs, budget);
  if (const auto* mutables = p.mutable_data_segments()) {
    for (const pte_fb::SubsegmentOffsets* m : *mutables) out.mutable_data_segments.push_back(Subsegments(*m, budget));
  }
  if (const auto* named = p.named_data()) {
    for (uoffset_t i = 0; i < named->size(); ++i) {
      const pte_fb::NamedData* d = named->Get(i);
      PteNamedData nd;
      if (d->key()) {
        budget.Spend(d->key()->size());
        nd.key = d->key()->str();
      }
      nd.segment_index = d->segment_index();
      if (nd.segment_index >= out.segments.size()) {
        Fail(name, "named data " + N(i) + " (" + Quote(nd.key) + ") is in segment " + N(nd.segment_index) +
                       ", past the " + N(out.segments.size()) + " segments");
      }
      nd.bytes = out.segments[nd.segment_index].size;
      out.named_data.push_back(std::move(nd));
    }
  }
}

// What refers to each segment, first come: constants, mutable data,
// delegates, named data.
void Attribute(PteProgram& p) {
  auto use = [&](uint64_t i, PteSizeKind kind, const std::string& label) {
    if (i < p.segments.size() && p.segments[i].use == PteSizeKind::kUnreferenced) {
      p.segments[i].use = kind;
      p.segments[i].label = label;
    }
  };
  // offsets[0] is reserved: a constant segment with no other offset holds no constant.
  if (p.constant_segment && p.constant_segment->offsets.size() > 1) {
    use(p.constant_segment->segment_index, PteSizeKind::kConstants, "");
  }
  for (const PteSubsegments& m : p.mutable_data_segments) {
    if (!m.offsets.empty()) use(m.segment_index, PteSizeKind::kMutableData, "");
  }
  for (const PteMethod& m : p.methods) {
    for (const PteDelegate& d : m.delegates) {
      if (!d.inline_data) use(d.index, PteSizeKind::kDelegate, d.backend_id);
    }
  }
  for (const PteNamedData& d : p.named_data) use(d.segment_index, PteSizeKind::kNamedData, d.key);
}

SizeParts InlineParts(const PteProgram& p, const std::vector<uint64_t>& blobs) {
  std::vector<const PteDelegate*> users(blobs.size(), nullptr);  // the first delegate of each blob
  for (const PteMethod& m : p.methods) {
    for (const PteDelegate& d : m.delegates) {
      if (d.inline_data && d.index < users.size() && !users[d.index]) users[d.index] = &d;
    }
  }
  SizeParts parts;
  parts.Add(PteSizeKind::kConstants, "", true, p.constant_buffer_bytes);
  for (size_t i = 0; i < blobs.size(); ++i) {
    if (users[i]) {
      parts.Add(PteSizeKind::kDelegate, users[i]->backend_id, true, blobs[i]);
    } else {
      parts.Add(PteSizeKind::kUnreferenced, "", true, blobs[i]);
    }
  }
  return parts;
}

}  // namespace

void ReadProgramFile(std::string_view flatbuffer, const Head& head, const std::string& name,
                     const PteReadOptions& options, PteFile& out) {
  const pte_fb::Program& p = Verify(flatbuffer, name);
  Budget budget(flatbuffer.size(), name);
  PteProgram& program = out.program;
  program.version = p.version();
  const std::vector<uint64_t> blobs = ReadInline(p, program);
  ReadSegments(p, head, out.file_size, name, budget, program);
  ProgramContext ctx{p, program, name, budget, options.chains,
                     reinterpret_cast<const uint8_t*>(flatbuffer.data())};
  if (const auto* plans = p.execution_plan()) {
    for (uoffset_t i = 0; i < plans->size(); ++i) {
      program.methods.push_back(ReadMethod(*plans->Get(i), i, ctx, program.tensors));
    }
  }
  Attribute(program);
  const uint64_t header_bytes = 8 + (head.header.present ? uint64_t{head.header.length} : 0);
  out.sizes = BreakDown(out.file_size, header_bytes, head.flatbuffer_end, InlineParts(program, blobs),
                        program.segments, name);
}

}  // namespace tsctl::pte_internal
