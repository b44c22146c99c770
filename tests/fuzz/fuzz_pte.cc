// libFuzzer target: the ExecuTorch reader (.pte, .ptd, .bpte: headers,
// FlatBuffers verifier, indices, segments, size breakdown; with the chains,
// every value and instruction) on bytes in memory, and tsctl graph's text and
// DOT of each method. Besides crashes and sanitizer reports it traps on a
// broken promise of tsctl/pte.h: an error other than one kFormat line, a size
// breakdown that does not sum to what it breaks down, or a file the summary
// refuses that the chains read.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "tsctl/error.h"
#include "tsctl/pte.h"

namespace {

uint64_t Sum(const std::vector<tsctl::PteSizePart>& parts) {
  uint64_t n = 0;
  for (const tsctl::PteSizePart& p : parts) n += p.bytes;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)tsctl::LooksLikePte(bytes.substr(0, tsctl::kPteHeadBytes));
  bool summary = false;
  try {
    tsctl::PteFile f = tsctl::ReadPteBytes(bytes, "<fuzz>");
    if (Sum(f.sizes) != f.file_size) __builtin_trap();
    if (f.kind == tsctl::PteKind::kBundled && Sum(f.bundled.program_sizes) != f.bundled.program_bytes) __builtin_trap();
    summary = true;
  } catch (const tsctl::Error& e) {
    if (e.kind() != tsctl::ErrorKind::kFormat || std::strchr(e.what(), '\n')) __builtin_trap();
  }
  try {
    tsctl::PteFile f = tsctl::ReadPteBytes(bytes, "<fuzz>", {.chains = true});
    if (!summary) __builtin_trap();
    if (f.kind == tsctl::PteKind::kFlatTensor) return 0;
    for (const tsctl::PteMethod& m : f.program.methods) {
      (void)tsctl::RenderPteGraph(f, m.name, false);
      (void)tsctl::RenderPteGraph(f, m.name, true);
    }
  } catch (const tsctl::Error& e) {
    if (e.kind() != tsctl::ErrorKind::kFormat || std::strchr(e.what(), '\n')) __builtin_trap();
  }
  return 0;
}
