// Where a file's segments lie, and what each part of the file holds: a size
// breakdown whose parts sum to the file's size.
#include <algorithm>
#include <numeric>

#include "pte_internal.h"

namespace tsctl::pte_internal {
namespace {

std::string ByteRange(const PteSegment& s) { return "bytes " + N(s.file_offset) + "-" + N(s.file_offset + s.size); }

// No two non-empty segments share a byte.
void CheckOverlaps(const std::vector<PteSegment>& segments, const std::string& name) {
  std::vector<size_t> order(segments.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return segments[a].file_offset < segments[b].file_offset; });
  const PteSegment* last = nullptr;
  size_t last_index = 0;
  for (size_t i : order) {
    const PteSegment& s = segments[i];
    if (s.size == 0) continue;
    if (last && s.file_offset < last->file_offset + last->size) {
      Fail(name, "segments " + N(last_index) + " (" + ByteRange(*last) + ") and " + N(i) + " (" + ByteRange(s) + ") overlap");
    }
    last = &s;
    last_index = i;
  }
}

}  // namespace

std::vector<PteSegment> PlaceSegments(const RawSegments& raw, const PteHeader& header, uint64_t flatbuffer_end,
                                      uint64_t file_size, const std::string& name) {
  std::vector<PteSegment> out;
  if (raw.empty()) return out;
  for (size_t i = 0; i < raw.size() && !header.present; ++i) {
    // Exporters list an empty segment even where there is no header.
    if (raw[i].second > 0) {
      Fail(name, "segment " + N(i) + " holds " + N(raw[i].second) +
                     " bytes but the program has no extended header (eh00) saying where segments start");
    }
  }
  const uint64_t base = header.segment_base_offset;  // 0 without a header
  uint64_t limit = file_size;
  if (header.segment_data_size) limit = std::min(limit, base + *header.segment_data_size);  // ReadHead checked the sum
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    PteSegment s;
    s.offset = raw[i].first;
    s.size = raw[i].second;
    const std::string what = "segment " + N(i) + " (" + N(s.size) + " bytes at offset " + N(s.offset) + ")";
    s.file_offset = CheckedAdd(base, s.offset, name, what + ": segment base offset + offset");
    uint64_t end = CheckedAdd(s.file_offset, s.size, name, what + ": its end");
    if (s.size > 0 && s.file_offset < flatbuffer_end) {
      Fail(name, what + " starts at byte " + N(s.file_offset) + ", inside the flatbuffer (bytes 0-" + N(flatbuffer_end) + ")");
    }
    if (end > file_size) {
      Fail(name, what + " ends at byte " + N(end) + ", past the end of the file (" + N(file_size) + " bytes)");
    }
    if (end > limit) {
      Fail(name, what + " ends at byte " + N(end) + ", past the segment data the header gives (bytes " + N(base) + "-" +
                     N(limit) + ")");
    }
    out.push_back(s);
  }
  CheckOverlaps(out, name);
  return out;
}

void SizeParts::Add(PteSizeKind kind, const std::string& label, bool in_flatbuffer, uint64_t bytes) {
  if (bytes == 0) return;
  auto [it, added] = index_.try_emplace(std::make_tuple(static_cast<int>(kind), label, in_flatbuffer), parts_.size());
  if (added) {
    parts_.push_back(PteSizePart{kind, label, in_flatbuffer, 0});
  }
  parts_[it->second].bytes += bytes;
}

std::vector<PteSizePart> BreakDown(uint64_t total, uint64_t header_bytes, uint64_t flatbuffer_end,
                                   const SizeParts& inline_parts,
                                   const std::vector<PteSegment>& segments, const std::string& name) {
  uint64_t inline_bytes = 0;
  for (const PteSizePart& p : inline_parts.parts()) inline_bytes = CheckedAdd(inline_bytes, p.bytes, name, "inline data");
  header_bytes = std::min(header_bytes, flatbuffer_end);
  if (inline_bytes > flatbuffer_end - header_bytes) {
    Fail(name, "the flatbuffer's inline data (" + N(inline_bytes) + " bytes) is more than the flatbuffer holds (" +
                   N(flatbuffer_end - header_bytes) + " bytes): its tables share or overlap data");
  }
  SizeParts parts;
  parts.Add(PteSizeKind::kHeader, "", true, header_bytes);
  parts.Add(PteSizeKind::kFlatbuffer, "", true, flatbuffer_end - header_bytes - inline_bytes);
  for (const PteSizePart& p : inline_parts.parts()) parts.Add(p.kind, p.label, true, p.bytes);
  uint64_t used = flatbuffer_end;
  for (const PteSegment& s : segments) {
    // One part for all named or tensor data; a delegate's part per backend.
    bool keyed = s.use == PteSizeKind::kNamedData || s.use == PteSizeKind::kTensorData;
    parts.Add(s.use, keyed ? std::string() : s.label, false, s.size);
    used += s.size;  // PlaceSegments: disjoint, after the flatbuffer, inside the file
  }
  if (used > total) Fail(name, "the parts of the file come to " + N(used) + " bytes, more than its " + N(total));
  parts.Add(PteSizeKind::kPadding, "", false, total - used);
  return parts.Take();
}

}  // namespace tsctl::pte_internal
