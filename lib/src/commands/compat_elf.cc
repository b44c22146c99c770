// What an ELF file says about where it can run, read from its bytes with
// bounds checked at every step (the bytes come from an archive): the symbol
// versions a shared object needs (.gnu.version_r) or defines
// (.gnu.version_d), as the dynamic loader matches them, and the SM
// architecture of a CUDA ELF (.cubin). 64-bit little-endian ELF only (what
// x86-64 and aarch64 Linux and CUDA write); anything else reads as nothing.
// Written here rather than with libelf: three fields of one format, and the
// project reads untrusted bytes itself everywhere else too.
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compat_internal.h"

namespace tsctl {
namespace {

constexpr uint32_t kShtVerdef = 0x6ffffffd;
constexpr uint32_t kShtVerneed = 0x6ffffffe;
constexpr uint16_t kEmCuda = 190;

class Bytes {
 public:
  explicit Bytes(const std::string& b) : b_(b) {}
  template <typename T>
  std::optional<T> At(uint64_t offset) const {
    if (offset > b_.size() || b_.size() - offset < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, b_.data() + offset, sizeof(T));
    return v;
  }
  // The NUL-terminated string at `offset`, at most 256 bytes; nullopt when unterminated.
  std::optional<std::string> String(uint64_t offset) const {
    if (offset >= b_.size()) return std::nullopt;
    const size_t end = b_.find('\0', offset);
    if (end == std::string::npos || end - offset > 256) return std::nullopt;
    return b_.substr(offset, end - offset);
  }

 private:
  const std::string& b_;
};

bool IsElf64Le(const std::string& b) {
  return b.size() >= 64 && b.compare(0, 4, "\x7f" "ELF") == 0 && b[4] == 2 && b[5] == 1;
}

struct Section {
  uint32_t type = 0;
  uint64_t offset = 0, size = 0;
  uint32_t link = 0, info = 0;
};

std::vector<Section> ElfSections(const Bytes& e) {
  std::vector<Section> out;
  const auto shoff = e.At<uint64_t>(0x28);
  const auto shentsize = e.At<uint16_t>(0x3A), shnum = e.At<uint16_t>(0x3C);
  if (!shoff || !shentsize || !shnum || *shentsize < 64) return out;
  for (uint64_t i = 0; i < *shnum; ++i) {
    const uint64_t at = *shoff + i * *shentsize;
    const auto type = e.At<uint32_t>(at + 4);
    const auto offset = e.At<uint64_t>(at + 24), size = e.At<uint64_t>(at + 32);
    const auto link = e.At<uint32_t>(at + 40), info = e.At<uint32_t>(at + 44);
    if (!type || !offset || !size || !link || !info) break;
    out.push_back({*type, *offset, *size, *link, *info});
  }
  return out;
}

// The version names of the verneed (`needed`) or verdef sections.
std::vector<std::string> Versions(const std::string& bytes, bool needed) {
  std::set<std::string> names;
  if (!IsElf64Le(bytes)) return {};
  const Bytes e(bytes);
  const std::vector<Section> sections = ElfSections(e);
  for (const Section& s : sections) {
    if (s.type != (needed ? kShtVerneed : kShtVerdef) || s.link >= sections.size()) continue;
    const uint64_t strings = sections[s.link].offset;
    uint64_t at = s.offset;
    for (uint32_t n = 0; n < s.info && n < 4096; ++n) {
      const auto count = e.At<uint16_t>(at + (needed ? 2 : 6));
      const auto aux = e.At<uint32_t>(at + (needed ? 8 : 12)), next = e.At<uint32_t>(at + (needed ? 12 : 16));
      const auto flags = e.At<uint16_t>(at + 2);
      if (!count || !aux || !next || !flags) break;
      uint64_t a = at + *aux;
      for (uint16_t k = 0; k < *count && k < 4096; ++k) {
        const auto name = e.At<uint32_t>(a + (needed ? 8 : 0)), anext = e.At<uint32_t>(a + (needed ? 12 : 4));
        if (!name || !anext) break;
        // A verdef's first name is the file's own (VER_FLG_BASE); its others are parents.
        const bool base = !needed && (*flags & 1);
        if (auto text = e.String(strings + *name); text && !base && (needed || k == 0)) names.insert(*text);
        if (*anext == 0) break;
        a += *anext;
      }
      if (*next == 0) break;
      at += *next;
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace

std::vector<std::string> ElfNeededVersions(const std::string& bytes) { return Versions(bytes, true); }
std::vector<std::string> ElfDefinedVersions(const std::string& bytes) { return Versions(bytes, false); }

std::string CubinArch(const std::string& bytes) {
  if (!IsElf64Le(bytes)) return "";
  const Bytes e(bytes);
  const auto machine = e.At<uint16_t>(0x12);
  const auto flags = e.At<uint32_t>(0x30);
  if (!machine || *machine != kEmCuda || !flags) return "";
  // CUDA's ELF ABI version 7 keeps the SM in the low byte of e_flags; version
  // 8 (CUDA 12.8 and later) in the second.
  const unsigned abi = static_cast<unsigned char>(bytes[8]);
  const unsigned sm = abi >= 8 ? (*flags >> 8) & 0xff : *flags & 0xff;
  return sm ? "sm_" + std::to_string(sm) : "";
}

}  // namespace tsctl
