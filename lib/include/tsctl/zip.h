// A ZIP reader that exposes the archive's layout: where each record's local
// header and data sit, so that alignment, overlaps and duplicate names can be
// reported, and records can be copied byte for byte. libzip hides exactly
// these details (see docs/manual/design.md, "Why a ZIP reader of our own").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tsctl/source.h"

namespace tsctl {

inline constexpr uint16_t kZipStored = 0;
inline constexpr uint16_t kZipDeflated = 8;

struct ZipEntry {
  std::string name;  // as stored, including the archive's root folder
  uint16_t version_made_by = 0;
  uint16_t version_needed = 0;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint16_t mod_time = 0;
  uint16_t mod_date = 0;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  // Offset of the first data byte, from the local header. 0 if the local
  // header could not be read (see `local_header_error`).
  uint64_t data_offset = 0;
  // Size of the local header (30 + name + extra).
  uint64_t local_header_size = 0;
  uint32_t external_attributes = 0;
  // Where this entry's central directory record sits in the file, and its size.
  uint64_t central_offset = 0;
  uint64_t central_size = 0;
  std::string local_header_error;  // empty when the local header is sound
  // Set when the local header is sound but declares another method, CRC-32 or
  // size than the central directory (bit 3 and ZIP64 fields aside): readers
  // that stream local headers read something else than miniz (LibTorch).
  std::string local_header_mismatch;

  bool encrypted() const { return (flags & 0x1) != 0; }
  bool has_data_descriptor() const { return (flags & 0x8) != 0; }
  // One past the last byte of data (excluding any data descriptor).
  uint64_t data_end() const { return data_offset + compressed_size; }
};

struct ZipLayout {
  std::vector<ZipEntry> entries;  // central directory order
  uint64_t central_directory_offset = 0;
  uint64_t central_directory_size = 0;
  uint64_t eocd_offset = 0;  // of the end-of-central-directory record
  // Where the trailer starts: the ZIP64 end record if there is one, else the
  // end record. Normally central_directory_offset + central_directory_size.
  uint64_t trailer_offset = 0;
  bool zip64 = false;
  // The comment as far as the file holds it (see comment_truncated).
  std::string comment;

  // Facts on which ZIP readers can disagree (Archive::Ambiguities words them).
  // The end record's declared comment runs past the end of the file: miniz,
  // Python's zipfile and Info-ZIP take it anyway, libzip does not.
  bool comment_truncated = false;
  // Bytes after the end record and its comment.
  uint64_t trailing_bytes = 0;
  // Other well-formed end records (offsets) in the window readers search: a
  // reader that tries each (libzip) or skips the last could pick one.
  std::vector<uint64_t> other_end_records;
};

// Parses the end-of-central-directory record, the central directory and every
// local header. The end record is the one miniz (LibTorch's ZIP reader)
// takes: the last signature in the final 64 KiB + 22 bytes with at least 22
// bytes after it, whatever comment length it declares. Throws tsctl::Error (kFormat) with a one-line cause if the
// bytes are not a ZIP archive or its central directory is damaged. Damage to
// a single local header is recorded in that entry, not thrown.
ZipLayout ReadZipLayout(const ByteSource& src);

// True if `src` starts with a ZIP local-header or end-of-central-directory
// signature.
bool LooksLikeZip(const ByteSource& src);

// Returns the uncompressed content of `entry`, verifying its CRC-32.
// Throws tsctl::Error (kFormat) if the content is larger than `max_bytes`,
// the method is unsupported, the entry is encrypted, inflation fails, the
// size differs from the declared one, or the CRC does not match.
std::string ReadEntry(const ByteSource& src, const ZipEntry& entry,
                      uint64_t max_bytes = uint64_t{1} << 30);

// Streams the uncompressed content of `entry` through `sink` in chunks,
// returning the CRC-32 of all bytes produced, and stops with kFormat once more
// than `max_bytes` come out (a zip bomb guard). Does not compare with the
// declared CRC or size: callers decide what a mismatch means.
struct StreamResult {
  uint32_t crc32 = 0;
  uint64_t produced = 0;
};
StreamResult StreamEntry(const ByteSource& src, const ZipEntry& entry,
                         uint64_t max_bytes,
                         const std::function<void(const char*, size_t)>& sink = {});

uint32_t Crc32(const void* data, size_t n, uint32_t crc = 0);

}  // namespace tsctl
