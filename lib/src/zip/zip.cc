#include "tsctl/zip.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "tsctl/error.h"
#include "tsctl/zip_structure.h"
#include "zip_format.h"

namespace tsctl {
namespace {

using namespace zip_format;  // record signatures
constexpr uint64_t kEocdSize = 22;
constexpr uint64_t kMaxComment = 0xFFFF;

uint16_t U16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) |
                               (static_cast<uint8_t>(p[1]) << 8));
}
uint32_t U32(const char* p) {
  return static_cast<uint32_t>(U16(p)) | (static_cast<uint32_t>(U16(p + 2)) << 16);
}
uint64_t U64(const char* p) {
  return static_cast<uint64_t>(U32(p)) | (static_cast<uint64_t>(U32(p + 4)) << 32);
}

Error Bad(const std::string& what) { return Error(ErrorKind::kFormat, what); }

// Applies a ZIP64 extended-information extra field to the entry's fields that
// were saturated at 0xFFFF(FFFF).
void ApplyZip64Extra(const std::string& extra, ZipEntry& e, bool& disk_saturated) {
  size_t pos = 0;
  while (pos + 4 <= extra.size()) {
    uint16_t id = U16(extra.data() + pos);
    uint16_t len = U16(extra.data() + pos + 2);
    size_t body = pos + 4;
    if (body + len > extra.size()) break;
    if (id == 0x0001) {
      size_t p = body;
      auto take = [&](uint64_t& field) {
        if (p + 8 <= body + len) {
          field = U64(extra.data() + p);
          p += 8;
        }
      };
      if (e.uncompressed_size == 0xFFFFFFFFu) take(e.uncompressed_size);
      if (e.compressed_size == 0xFFFFFFFFu) take(e.compressed_size);
      if (e.local_header_offset == 0xFFFFFFFFu) take(e.local_header_offset);
      disk_saturated = false;
    }
    pos = body + len;
  }
}

// Well-formed end records before the one at `chosen` (an index into `tail`,
// which starts at file offset `base`): single disk, a central directory that
// ends before the record and starts with a central signature (or is empty).
std::vector<uint64_t> OtherEndRecords(const ByteSource& src, const std::string& tail, uint64_t base, uint64_t chosen) {
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < chosen && out.size() < 16; ++i) {
    const char* p = tail.data() + i;
    if (U32(p) != kEocdSig || U16(p + 4) != 0 || U16(p + 6) != 0 || U16(p + 8) != U16(p + 10)) continue;
    const uint64_t at = base + i, count = U16(p + 10), cd_size = U32(p + 12), cd_off = U32(p + 16);
    if (cd_off > at || cd_size > at - cd_off || cd_size < count * 46) continue;
    // Its directory must start with a central header, as a reader that
    // tries this record (libzip) requires: a ZIP stored as a record near the
    // end (a torch.save reference) has an end record whose offsets are its
    // own, pointing elsewhere in this file, and no reader takes it.
    if (count > 0) {
      char sig[4];
      if (cd_off >= base) std::memcpy(sig, tail.data() + (cd_off - base), 4);
      else src.Read(cd_off, sig, 4);
      if (U32(sig) != kCentralSig) continue;
    }
    out.push_back(at);
  }
  return out;
}

// Where the local header at `h` (30 bytes) declares other facts than the
// central directory: empty if none.
std::string LocalMismatch(const char* h, const ZipEntry& e) {
  if (U16(h + 8) != e.method) return "compression method";
  if ((e.flags & 0x8) != 0 || (U16(h + 6) & 0x8) != 0) return {};  // sizes and CRC in a data descriptor
  if (U32(h + 14) != e.crc32) return "CRC-32";
  const uint32_t csize = U32(h + 18), usize = U32(h + 22);
  if (csize != 0xFFFFFFFFu && csize != e.compressed_size) return "compressed size";
  if (usize != 0xFFFFFFFFu && usize != e.uncompressed_size) return "size";
  return {};
}

void ReadLocalHeader(const ByteSource& src, ZipEntry& e) {
  if (e.local_header_offset > src.Size() || src.Size() - e.local_header_offset < 30) {
    e.local_header_error = "local header lies past the end of the file";
    return;
  }
  char h[30];
  src.Read(e.local_header_offset, h, sizeof h);
  if (U32(h) != kLocalSig) {
    e.local_header_error = "no local header signature at offset " +
                           std::to_string(e.local_header_offset);
    return;
  }
  uint64_t name_len = U16(h + 26);
  uint64_t extra_len = U16(h + 28);
  e.local_header_size = 30 + name_len + extra_len;
  uint64_t data = e.local_header_offset + e.local_header_size;
  if (data > src.Size()) {
    e.local_header_error = "local header runs past the end of the file";
    return;
  }
  e.data_offset = data;
  if (src.ReadString(e.local_header_offset + 30, name_len) != e.name) {
    e.local_header_error = "local header name differs from the central directory";
  } else if (e.compressed_size > src.Size() - data) {
    e.local_header_error = "record data runs past the end of the file (truncated)";
  } else {
    const std::string what = LocalMismatch(h, e);
    if (!what.empty()) e.local_header_mismatch = "local header declares another " + what + " than the central directory";
  }
}

// Finds the end-of-central-directory record as miniz does: the last
// signature with room for a record after it, whatever comment it declares.
// Fills the layout's fields from it and returns the record count it declares.
uint64_t ReadEndRecord(const ByteSource& src, ZipLayout& layout) {
  const uint64_t size = src.Size();
  uint64_t tail_len = std::min<uint64_t>(size, kEocdSize + kMaxComment);
  std::string tail = src.ReadString(size - tail_len, tail_len);
  int64_t found = -1;
  for (int64_t i = static_cast<int64_t>(tail_len - kEocdSize); i >= 0; --i) {
    if (U32(tail.data() + i) == kEocdSig) {
      found = i;
      break;
    }
  }
  if (found < 0) {
    throw Bad(LooksLikeZip(src)
                  ? "no end-of-central-directory record"
                  : "not a ZIP archive");
  }
  const char* eocd = tail.data() + found;
  layout.eocd_offset = size - tail_len + static_cast<uint64_t>(found);
  const uint64_t count = U16(eocd + 10);
  layout.central_directory_size = U32(eocd + 12);
  layout.central_directory_offset = U32(eocd + 16);
  const uint64_t comment_room = tail_len - static_cast<uint64_t>(found) - kEocdSize;
  const uint64_t comment_len = U16(eocd + 20);
  layout.comment_truncated = comment_len > comment_room;
  layout.comment = std::string(eocd + 22, std::min(comment_len, comment_room));
  layout.trailing_bytes = comment_room - layout.comment.size();
  layout.other_end_records = OtherEndRecords(src, tail, size - tail_len, static_cast<uint64_t>(found));
  layout.trailer_offset = layout.eocd_offset;
  if (U16(eocd + 4) != 0 || U16(eocd + 6) != 0) throw Bad("multi-disk ZIP archives are not supported");
  return count;
}

// ZIP64: a locator sits just before the EOCD record. Where there is one, the
// ZIP64 record it points to replaces the record count and the directory's
// size and offset.
void ReadZip64EndRecord(const ByteSource& src, ZipLayout& layout, uint64_t& count) {
  if (layout.eocd_offset < 20) return;
  const uint64_t size = src.Size();
  char loc[20];
  src.Read(layout.eocd_offset - 20, loc, sizeof loc);
  if (U32(loc) != kZip64LocatorSig) return;
  uint64_t z64_off = U64(loc + 8);
  char z64[56];
  if (z64_off > size || size - z64_off < sizeof z64) throw Bad("ZIP64 end-of-central-directory record lies past the end of the file");
  src.Read(z64_off, z64, sizeof z64);
  if (U32(z64) != kZip64EocdSig) throw Bad("ZIP64 end-of-central-directory record is damaged");
  layout.zip64 = true;
  layout.trailer_offset = z64_off;
  count = U64(z64 + 32);
  layout.central_directory_size = U64(z64 + 40);
  layout.central_directory_offset = U64(z64 + 48);
}

// Throws unless the central directory lies inside the file (of `size` bytes)
// and has room for the `count` records it declares.
void CheckDirectoryExtent(uint64_t size, const ZipLayout& layout, uint64_t count) {
  if (layout.central_directory_offset > size ||
      layout.central_directory_size > size - layout.central_directory_offset) {
    throw Bad("ZIP central directory lies past the end of the file: the file is truncated");
  }
  // Every central record takes at least 46 bytes: bound the count before reserving.
  if (count > layout.central_directory_size / 46) {
    throw Bad("ZIP central directory declares " + std::to_string(count) +
              " records but is only " + std::to_string(layout.central_directory_size) + " bytes");
  }
}

// Reads the `count` central directory records into layout.entries, each
// with what its local header says.
void ReadCentralDirectory(const ByteSource& src, uint64_t count, ZipLayout& layout) {
  std::string cd = src.ReadString(layout.central_directory_offset, layout.central_directory_size);
  layout.entries.reserve(count);
  size_t pos = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (pos + 46 > cd.size() || U32(cd.data() + pos) != kCentralSig) {
      throw Bad("ZIP central directory record " + std::to_string(i) + " is damaged");
    }
    const char* c = cd.data() + pos;
    ZipEntry e;
    e.version_made_by = U16(c + 4);
    e.version_needed = U16(c + 6);
    e.flags = U16(c + 8);
    e.method = U16(c + 10);
    e.mod_time = U16(c + 12);
    e.mod_date = U16(c + 14);
    e.crc32 = U32(c + 16);
    e.compressed_size = U32(c + 20);
    e.uncompressed_size = U32(c + 24);
    size_t name_len = U16(c + 28), extra_len = U16(c + 30), comment_len = U16(c + 32);
    e.external_attributes = U32(c + 38);
    e.local_header_offset = U32(c + 42);
    if (pos + 46 + name_len + extra_len + comment_len > cd.size()) {
      throw Bad("ZIP central directory record " + std::to_string(i) + " runs past the directory");
    }
    e.name.assign(c + 46, name_len);
    bool unused = false;
    ApplyZip64Extra(std::string(c + 46 + name_len, extra_len), e, unused);
    e.central_offset = layout.central_directory_offset + pos;
    e.central_size = 46 + name_len + extra_len + comment_len;
    pos += 46 + name_len + extra_len + comment_len;
    ReadLocalHeader(src, e);
    layout.entries.push_back(std::move(e));
  }
}

}  // namespace

uint32_t Crc32(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    auto chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = static_cast<uint32_t>(::crc32(crc, p, chunk));
    p += chunk;
    n -= chunk;
  }
  return crc;
}

bool LooksLikeZip(const ByteSource& src) {
  if (src.Size() < 4) return false;
  char sig[4];
  src.Read(0, sig, 4);
  uint32_t s = U32(sig);
  return s == kLocalSig || s == kEocdSig;
}

ZipLayout ReadZipLayout(const ByteSource& src) {
  const uint64_t size = src.Size();
  if (size < kEocdSize) throw Bad("too small to be a ZIP archive (" + std::to_string(size) + " bytes)");
  ZipLayout layout;
  uint64_t count = ReadEndRecord(src, layout);
  ReadZip64EndRecord(src, layout, count);
  CheckDirectoryExtent(size, layout, count);
  ReadCentralDirectory(src, count, layout);
  return layout;
}

StreamResult StreamEntry(const ByteSource& src, const ZipEntry& entry, uint64_t max_bytes,
                         const std::function<void(const char*, size_t)>& sink) {
  if (!entry.local_header_error.empty()) throw Bad(entry.name + ": " + entry.local_header_error);
  if (entry.encrypted()) throw Bad(entry.name + ": record is encrypted");
  StreamResult result;
  constexpr size_t kChunk = 1 << 20;
  std::string in;
  if (entry.method == kZipStored) {
    if (entry.compressed_size > max_bytes) {
      throw Bad(entry.name + ": record of " + std::to_string(entry.compressed_size) +
                " bytes exceeds the limit of " + std::to_string(max_bytes));
    }
    for (uint64_t done = 0; done < entry.compressed_size;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, entry.compressed_size - done));
      in.resize(n);
      src.Read(entry.data_offset + done, in.data(), n);
      result.crc32 = Crc32(in.data(), n, result.crc32);
      if (sink) sink(in.data(), n);
      done += n;
    }
    result.produced = entry.compressed_size;
    return result;
  }
  if (entry.method != kZipDeflated) {
    throw Bad(entry.name + ": unsupported compression method " + std::to_string(entry.method));
  }
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw Error(ErrorKind::kIo, "zlib: inflateInit2 failed");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&zs};
  std::string out(kChunk, '\0');
  uint64_t consumed = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (zs.avail_in == 0 && consumed < entry.compressed_size) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, entry.compressed_size - consumed));
      in.resize(n);
      src.Read(entry.data_offset + consumed, in.data(), n);
      consumed += n;
      zs.next_in = reinterpret_cast<Bytef*>(in.data());
      zs.avail_in = static_cast<uInt>(n);
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      if (rc == Z_BUF_ERROR && zs.avail_in == 0 && consumed >= entry.compressed_size) {
        throw Bad(entry.name + ": compressed data ends early");
      }
      throw Bad(entry.name + ": deflate data is corrupt" + (zs.msg ? std::string(" (") + zs.msg + ")" : ""));
    }
    size_t have = out.size() - zs.avail_out;
    if (result.produced + have > max_bytes) {
      throw Bad(entry.name + ": record inflates past the limit of " + std::to_string(max_bytes) + " bytes");
    }
    result.crc32 = Crc32(out.data(), have, result.crc32);
    result.produced += have;
    if (sink && have > 0) sink(out.data(), have);
  }
  return result;
}

std::string ReadEntry(const ByteSource& src, const ZipEntry& entry, uint64_t max_bytes) {
  if (entry.uncompressed_size > max_bytes) {
    throw Bad(entry.name + ": record of " + std::to_string(entry.uncompressed_size) +
              " bytes exceeds the limit of " + std::to_string(max_bytes));
  }
  std::string content;
  content.reserve(static_cast<size_t>(entry.uncompressed_size));
  StreamResult r = StreamEntry(src, entry, max_bytes,
                               [&](const char* p, size_t n) { content.append(p, n); });
  if (r.produced != entry.uncompressed_size) {
    throw Bad(entry.name + ": record holds " + std::to_string(r.produced) +
              " bytes but declares " + std::to_string(entry.uncompressed_size));
  }
  if (r.crc32 != entry.crc32) throw Bad(entry.name + ": CRC-32 mismatch (record is corrupt)");
  return content;
}

}  // namespace tsctl

namespace tsctl {

void RequireSoundStructure(const ZipLayout& layout) {
  const ZipEntry* first = nullptr;
  size_t damaged = 0;
  for (const ZipEntry& e : layout.entries) {
    if (e.local_header_error.empty()) continue;
    if (!first) first = &e;
    ++damaged;
  }
  if (!first) return;
  std::string more = damaged > 1 ? " (and " + std::to_string(damaged - 1) + " more)" : "";
  throw Error(ErrorKind::kFormat, "damaged ZIP structure: " + first->name + ": " + first->local_header_error + more +
                                      " (tsctl validate lists every record)");
}

}  // namespace tsctl
