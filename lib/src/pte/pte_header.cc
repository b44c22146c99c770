// The first bytes of an ExecuTorch file: the flatbuffer root offset, the
// file identifier at bytes 4-8 and the header after it, a program's optional
// extended header "eh00" (docs/source/pte-file-format.md upstream: length,
// program size, segment base offset and, in the 32-byte header, segment data
// size) or a .ptd's FlatTensor header "FH01" (ptd-file-format.md: length,
// flatbuffer offset and size, segment base offset, segment data size). All
// numbers are little-endian.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <cstring>

#include "pte_internal.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"

namespace tsctl {
namespace pte_internal {

void Fail(const std::string& name, const std::string& what) { throw Error(ErrorKind::kFormat, name + ": " + what); }

uint64_t CheckedAdd(uint64_t a, uint64_t b, const std::string& name, const std::string& what) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) Fail(name, what + " overflows 64 bits");
  return sum;
}

std::string Quote(std::string_view s) { return "'" + EscapeText(s) + "'"; }

namespace {

uint32_t LeU32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(b[at + i])} << (8 * i);
  return v;
}

uint64_t LeU64(std::string_view b, size_t at) { return uint64_t{LeU32(b, at)} | (uint64_t{LeU32(b, at + 4)} << 32); }

// "ET" and two decimal digits at `at` (prefix "ET", "FT", "BP", "eh", "FH").
bool Tagged(std::string_view b, size_t at, const char* prefix) {
  return b.size() >= at + 4 && b.compare(at, 2, prefix) == 0 && std::isdigit(static_cast<unsigned char>(b[at + 2])) &&
         std::isdigit(static_cast<unsigned char>(b[at + 3]));
}

// "it starts with 'NOT_A_PTE\n...'": the first bytes, escaped.
std::string FirstBytes(std::string_view head) {
  std::string_view shown = head.substr(0, 16);
  std::string out = "it starts with '" + EscapeText(shown) + (head.size() > shown.size() ? "...'" : "'");
  if (head.substr(0, 4) == std::string_view("PK\x03\x04", 4)) out += " (a ZIP archive)";
  return out;
}

[[noreturn]] void NotExecuTorch(std::string_view head, uint64_t file_size, const std::string& name) {
  if (file_size < kPteHeadBytes) {
    Fail(name, "not an ExecuTorch program, .ptd or .bpte: " + N(file_size) + " bytes, too few for a file identifier" +
                   (head.empty() ? std::string() : "; " + FirstBytes(head)));
  }
  Fail(name, "not an ExecuTorch program, .ptd or .bpte (no ET12, FT01 or BP08 at bytes 4-8): " + FirstBytes(head));
}

// The kind an identifier names; Fails for another schema version or none.
PteKind KindOf(std::string_view head, uint64_t file_size, const std::string& name) {
  if (file_size < kPteHeadBytes || head.size() < kPteHeadBytes) NotExecuTorch(head, file_size, name);
  std::string id(head.substr(4, 4));
  if (id == "ET12") return PteKind::kProgram;
  if (id == "FT01") return PteKind::kFlatTensor;
  if (id == "BP08") return PteKind::kBundled;
  std::string version = id.substr(2);
  if (Tagged(head, 4, "ET")) Fail(name, "ExecuTorch program of schema version " + version + "; this tsctl reads ET12");
  if (Tagged(head, 4, "FT")) Fail(name, "ExecuTorch data file (.ptd) of schema version " + version + "; this tsctl reads FT01");
  if (Tagged(head, 4, "BP")) Fail(name, "ExecuTorch bundled program of schema version " + version + "; this tsctl reads BP08");
  NotExecuTorch(head, file_size, name);
}

// A program's extended header at byte 8, when there is one.
void ReadExtendedHeader(std::string_view head, uint64_t file_size, const std::string& name, Head& h) {
  h.flatbuffer_end = file_size;  // without the header, the whole file is the flatbuffer
  if (!Tagged(head, 8, "eh")) return;
  std::string magic(head.substr(8, 4));
  if (magic != "eh00") Fail(name, "extended header " + Quote(magic) + "; this tsctl reads eh00");
  PteHeader& x = h.header;
  x.present = true;
  x.magic = magic;
  if (head.size() < 32) Fail(name, "the file (" + N(file_size) + " bytes) ends inside its extended header");
  x.length = LeU32(head, 12);
  if (x.length < 24) Fail(name, "extended header of " + N(x.length) + " bytes; eh00 has at least 24");
  x.program_size = LeU64(head, 16);
  x.segment_base_offset = LeU64(head, 24);
  if (x.length >= 32) {
    if (head.size() < 40) Fail(name, "the file (" + N(file_size) + " bytes) ends inside its extended header");
    x.segment_data_size = LeU64(head, 32);
  }
  if (x.program_size > file_size) {
    Fail(name, "extended header: program size " + N(x.program_size) + " is past the end of the file (" + N(file_size) +
                   " bytes)");
  }
  if (x.program_size < 8 + uint64_t{x.length}) {
    Fail(name, "extended header: program size " + N(x.program_size) + " ends inside the header (" +
                   N(8 + uint64_t{x.length}) + " bytes)");
  }
  h.flatbuffer_end = x.program_size;
}

// A .ptd's FlatTensor header at byte 8.
void ReadFlatTensorHeader(std::string_view head, uint64_t file_size, const std::string& name, Head& h) {
  if (!Tagged(head, 8, "FH")) Fail(name, "ExecuTorch data file (FT01) without its FlatTensor header (FH01) at byte 8");
  std::string magic(head.substr(8, 4));
  if (magic != "FH01") Fail(name, "FlatTensor header " + Quote(magic) + "; this tsctl reads FH01");
  if (head.size() < 48) Fail(name, "the file (" + N(file_size) + " bytes) ends inside its FlatTensor header");
  PteHeader& x = h.header;
  x.present = true;
  x.magic = magic;
  x.length = LeU32(head, 12);
  if (x.length < 40) Fail(name, "FlatTensor header of " + N(x.length) + " bytes; FH01 has at least 40");
  x.flatbuffer_offset = LeU64(head, 16);
  uint64_t flatbuffer_size = LeU64(head, 24);
  x.segment_base_offset = LeU64(head, 32);
  x.segment_data_size = LeU64(head, 40);
  if (x.flatbuffer_offset < 8 + uint64_t{x.length}) {
    Fail(name, "FlatTensor header: flatbuffer offset " + N(x.flatbuffer_offset) + " lies inside the header (" +
                   N(8 + uint64_t{x.length}) + " bytes)");
  }
  x.program_size = CheckedAdd(x.flatbuffer_offset, flatbuffer_size, name, "FlatTensor header: flatbuffer offset + size");
  if (x.program_size > file_size) {
    Fail(name, "FlatTensor header: the flatbuffer (" + N(flatbuffer_size) + " bytes at " + N(x.flatbuffer_offset) +
                   ") runs past the end of the file (" + N(file_size) + " bytes)");
  }
  h.flatbuffer_end = x.program_size;
}

// The segment base offset and segment data size against the flatbuffer and
// the file.
void CheckSegmentArea(const Head& h, uint64_t file_size, const std::string& name) {
  const PteHeader& x = h.header;
  if (!x.present) return;
  const std::string where = x.magic == "FH01" ? "FlatTensor header" : "extended header";
  if (x.segment_base_offset > file_size) {
    Fail(name, where + ": segment base offset " + N(x.segment_base_offset) + " is past the end of the file (" +
                   N(file_size) + " bytes)");
  }
  uint64_t data = x.segment_data_size.value_or(0);
  if (x.segment_base_offset != 0 && x.segment_base_offset < h.flatbuffer_end) {
    Fail(name, where + ": segment base offset " + N(x.segment_base_offset) + " lies inside the flatbuffer (bytes 0-" +
                   N(h.flatbuffer_end) + ")");
  }
  uint64_t end = CheckedAdd(x.segment_base_offset, data, name, where + ": segment base offset + segment data size");
  if (end > file_size) {
    Fail(name, where + ": segment data (" + N(data) + " bytes at " + N(x.segment_base_offset) +
                   ") runs past the end of the file (" + N(file_size) + " bytes)");
  }
}

}  // namespace

Head ReadHead(std::string_view head, uint64_t file_size, const std::string& name) {
  Head h;
  h.kind = KindOf(head, file_size, name);
  h.identifier = std::string(head.substr(4, 4));
  switch (h.kind) {
    case PteKind::kProgram: ReadExtendedHeader(head, file_size, name, h); break;
    case PteKind::kFlatTensor: ReadFlatTensorHeader(head, file_size, name, h); break;
    case PteKind::kBundled: h.flatbuffer_end = file_size; break;
  }
  CheckSegmentArea(h, file_size, name);
  if (h.flatbuffer_end >= kMaxFlatbufferBytes) {
    Fail(name, "the flatbuffer (" + N(h.flatbuffer_end) + " bytes) is larger than FlatBuffers' limit of 2 GiB");
  }
  return h;
}

}  // namespace pte_internal

bool LooksLikePte(std::string_view first_bytes) {
  using pte_internal::Tagged;
  return Tagged(first_bytes, 4, "ET") || Tagged(first_bytes, 4, "FT") || Tagged(first_bytes, 4, "BP");
}

bool IsPteFile(const std::string& path) {
  std::error_code ec;
  if (path == "-" || !std::filesystem::is_regular_file(path, ec)) return false;  // a FIFO is never opened here
  std::ifstream in(path, std::ios::binary);
  char head[kPteHeadBytes] = {};
  in.read(head, sizeof head);
  const std::string_view first(head, static_cast<size_t>(in.gcount()));
  if (first.size() == sizeof head && LooksLikePte(first)) return true;
  // Named as ExecuTorch names its files and no ZIP (a TorchScript archive
  // renamed stays one): the reader says what it starts with instead.
  const std::string ext = std::filesystem::path(path).extension().string();
  return (ext == ".pte" || ext == ".ptd" || ext == ".bpte") && first.substr(0, 2) != "PK";
}

}  // namespace tsctl
