// libFuzzer target: the ZIP reader (end record, central directory, local
// headers, inflating records) on bytes in memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tsctl/error.h"
#include "tsctl/zip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto src = tsctl::MakeMemorySource(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>");
  try {
    tsctl::ZipLayout layout = tsctl::ReadZipLayout(*src);
    size_t n = 0;
    for (const tsctl::ZipEntry& e : layout.entries) {
      if (++n > 64) break;
      try {
        tsctl::ReadEntry(*src, e, 1 << 20);
      } catch (const tsctl::Error&) {
      }
    }
  } catch (const tsctl::Error&) {
  }
  return 0;
}
