// The parts of the ExecuTorch reader (lib/src/pte/) and what they share; no
// FlatBuffers type here (pte_program.h has those).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "tsctl/pte.h"

namespace tsctl::pte_internal {

// Throws tsctl::Error (kFormat, "<name>: <what>").
[[noreturn]] void Fail(const std::string& name, const std::string& what);

// a + b, or Fail(name, "<what> overflows") when the sum does not fit 64 bits.
uint64_t CheckedAdd(uint64_t a, uint64_t b, const std::string& name, const std::string& what);

// ExecuTorch's name of a ScalarType value ("Float"; "ScalarType(N)" when
// unknown) and its element size in bytes (0 when unknown).
std::string ScalarTypeName(int value);
uint64_t ScalarTypeSize(int value);

// Elements x element size; 0 when a size is negative, the element size is
// unknown or the product does not fit 64 bits.
uint64_t TensorBytes(int scalar_type, const std::vector<int64_t>& sizes);

// A string from the file, quoted and escaped for a message.
std::string Quote(std::string_view s);

// FlatBuffers' largest buffer (2 GiB - 1): a bigger flatbuffer region is
// refused before the verifier sees it.
inline constexpr uint64_t kMaxFlatbufferBytes = (uint64_t{1} << 31) - 1;

// The FlatBuffers verifier's bounds: nesting well past any real file's
// (about 8), and one table per 4 bytes (each takes at least its 4-byte
// vtable offset), so tables shared many times over cannot make verifying a
// small file long.
inline constexpr uint32_t kVerifierMaxDepth = 64;
inline uint32_t VerifierMaxTables(size_t flatbuffer_bytes) { return static_cast<uint32_t>(flatbuffer_bytes / 4 + 64); }
// Those bounds as the verifier takes them, for a flatbuffer of `bytes`.
inline flatbuffers::Verifier::Options VerifierOptions(size_t bytes) {
  flatbuffers::Verifier::Options o;
  o.max_depth = kVerifierMaxDepth;
  o.max_tables = VerifierMaxTables(bytes);
  return o;
}

// A count or offset in a message.
inline std::string N(uint64_t v) { return std::to_string(v); }

// How many first bytes of a file ReadHead looks at (all of them if fewer).
inline constexpr size_t kHeadBytes = 64;

// What a file's first bytes say.
struct Head {
  PteKind kind = PteKind::kProgram;
  std::string identifier;
  PteHeader header;
  uint64_t flatbuffer_end = 0;  // the flatbuffer is bytes [0, flatbuffer_end), headers included
};

// Reads the identifier and the header from `head` (the first
// min(kHeadBytes, file_size) bytes of a file of `file_size` bytes) and
// checks every offset and size in it against the file's size. Fails naming
// the first bytes when the file is no ExecuTorch file, the schema version
// when it is of another one.
Head ReadHead(std::string_view head, uint64_t file_size, const std::string& name);

// Bytes from the file's start, 8-byte aligned in memory (FlatBuffers reads
// 64-bit scalars in place).
class AlignedBytes {
 public:
  explicit AlignedBytes(uint64_t size) : words_((size + 7) / 8), size_(size) {}
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words_.data()); }
  std::string_view view() const { return {reinterpret_cast<const char*>(words_.data()), static_cast<size_t>(size_)}; }

 private:
  std::vector<uint64_t> words_;
  uint64_t size_;
};

// A bound on what reading a verified flatbuffer may copy out of it: items
// (sizes, offsets, strings' bytes) a file refers to again and again through
// shared tables would otherwise make a small file a huge result.
class Budget {
 public:
  Budget(uint64_t flatbuffer_bytes, const std::string& name) : left_(4 * flatbuffer_bytes + 65536), name_(name) {}
  void Spend(uint64_t items);

 private:
  uint64_t left_;
  const std::string& name_;
};

// A flatbuffer string's text, its bytes spent from `budget`; "" for none.
inline std::string Str(const flatbuffers::String* s, Budget& budget) {
  if (!s) return {};
  budget.Spend(s->size());
  return s->str();
}

// Readers of each kind: `flatbuffer` is bytes [0, head.flatbuffer_end) of the
// file, aligned; they verify it, read it into `out` (out.kind, identifier,
// file_size, header are set) and fill out.sizes.
void ReadProgramFile(std::string_view flatbuffer, const Head& head, const std::string& name,
                     const PteReadOptions& options, PteFile& out);
void ReadFlatTensorFile(std::string_view flatbuffer, const Head& head, const std::string& name, PteFile& out);
void ReadBundledFile(std::string_view flatbuffer, const Head& head, const std::string& name,
                     const PteReadOptions& options, PteFile& out);

// ReadPteBytes for a whole file in memory (any alignment).
PteFile ReadInMemory(std::string_view bytes, const std::string& name, const PteReadOptions& options = {});

// Segments as the file lists them: (offset from the segment base, size).
using RawSegments = std::vector<std::pair<uint64_t, uint64_t>>;

// Places each segment in the file: after the flatbuffer, inside the file
// and, where the header gives it, inside the segment data; no two non-empty
// segments overlap. Fails naming the first that does not fit.
std::vector<PteSegment> PlaceSegments(const RawSegments& raw, const PteHeader& header, uint64_t flatbuffer_end,
                                      uint64_t file_size, const std::string& name);

// Parts of a size breakdown, merged by kind, label and place.
class SizeParts {
 public:
  // Adds `bytes` to the part of that kind, label and place (a new part at the
  // end if none), unless `bytes` is 0.
  void Add(PteSizeKind kind, const std::string& label, bool in_flatbuffer, uint64_t bytes);
  const std::vector<PteSizePart>& parts() const { return parts_; }
  std::vector<PteSizePart> Take() { return std::move(parts_); }

 private:
  std::vector<PteSizePart> parts_;
  std::map<std::tuple<int, std::string, bool>, size_t> index_;
};

// The breakdown of a file (or an embedded program) of `total` bytes: header,
// flatbuffer less the inline data in `inline_parts`, then `inline_parts`,
// each segment by its use, and the rest as padding. Fails if the parts come
// to more than `total` (inline data counted twice through shared tables).
std::vector<PteSizePart> BreakDown(uint64_t total, uint64_t header_bytes, uint64_t flatbuffer_end,
                                   const SizeParts& inline_parts,
                                   const std::vector<PteSegment>& segments, const std::string& name);

}  // namespace tsctl::pte_internal
