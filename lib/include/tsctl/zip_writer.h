// The ZIP writer of the ZIP layer, the counterpart of zip.h's reader. Like
// PyTorch's PyTorchStreamWriter it writes records one after the other
// (`WriteRecord`), then the central directory and the end records
// (`WriteEndOfFile`), but into memory and starting at any file offset, so a
// caller can append to an existing archive and choose where and in which
// order the bytes reach the disk. Records are stored (not compressed) with
// their data on a 64-byte boundary, as PyTorch writes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tsctl {

inline constexpr uint64_t kZipAlignment = 64;  // PyTorch's kFieldAlignment

// The end records for a central directory of `count` entries at `cd_offset`
// (`cd_size` bytes): a ZIP64 end record and locator when `zip64` is asked or
// a field does not fit 16/32 bits, then the classic end record carrying
// `comment` (at most 65535 bytes). The ZIP64 record, when present, sits
// right after the central directory, where every reader expects it.
std::string ZipEndRecords(uint64_t count, uint64_t cd_offset, uint64_t cd_size, bool zip64,
                          const std::string& comment);

// True if ZipEndRecords would write ZIP64 records for these values.
bool ZipNeedsZip64(uint64_t count, uint64_t cd_offset, uint64_t cd_size, bool zip64);

// What a ZipWriter produced, with the file offsets the bytes belong at. The
// three parts are contiguous: records, then central, then end.
struct ZipTail {
  uint64_t records_offset = 0;
  std::string records;  // local headers, padding and data of the new records
  uint64_t central_offset = 0;
  std::string central;  // kept central records verbatim, then the new ones
  uint64_t end_offset = 0;
  std::string end;  // ZIP64 end record and locator (if any), end record
  uint64_t end_of_file() const { return end_offset + end.size(); }
};

class ZipWriter {
 public:
  // `base`: the file offset of the first byte this writer produces.
  explicit ZipWriter(uint64_t base) : base_(base) {}

  // Appends a stored record named `name` (the full name, with the archive's
  // root folder), padding its local header with an "FB" extra field so that
  // the data starts on a kZipAlignment boundary. ZIP64 fields are used when
  // the data is 4 GiB or more, or the offset does not fit 32 bits.
  void WriteRecord(const std::string& name, const std::string& data);

  // Keeps a record that is already in the file: `central_record` is its
  // central-directory record, copied verbatim (its local header and data stay
  // where they are). Kept records come first in the central directory, in
  // the order of the calls.
  void KeepRecord(const std::string& central_record);

  // Adds `bytes` of padding before the central directory (so a caller can
  // move it, e.g. to a page boundary).
  void Pad(uint64_t bytes) { pad_ += bytes; }

  // Returns the records written, the central directory (kept records, then
  // new ones) and the end records (see ZipEndRecords). The writer can be
  // finished several times (with more padding in between).
  ZipTail WriteEndOfFile(bool zip64, const std::string& comment) const;

  uint64_t record_count() const { return kept_count_ + new_central_.size(); }

 private:
  uint64_t base_;
  std::string records_;
  std::string kept_central_;
  uint64_t kept_count_ = 0;
  std::vector<std::string> new_central_;
  uint64_t pad_ = 0;
};

}  // namespace tsctl
