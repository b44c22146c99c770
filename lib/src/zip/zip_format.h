// Record signatures of the ZIP format (APPNOTE.TXT), shared by tsctl's ZIP
// reader (zip.cc) and writer (zip_writer.cc). Private to lib/src/zip.
#pragma once

#include <cstdint>

namespace tsctl::zip_format {

inline constexpr uint32_t kLocalSig = 0x04034b50;         // local file header
inline constexpr uint32_t kCentralSig = 0x02014b50;       // central directory entry
inline constexpr uint32_t kEocdSig = 0x06054b50;          // end of central directory
inline constexpr uint32_t kZip64EocdSig = 0x06064b50;     // ZIP64 end of central directory
inline constexpr uint32_t kZip64LocatorSig = 0x07064b50;  // ZIP64 end-of-central-directory locator

}  // namespace tsctl::zip_format
