// Pull-style reading of one ZIP record, so that two records (from two
// archives) can be read side by side in bounded memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tsctl/source.h"
#include "tsctl/zip.h"

namespace tsctl {

class RecordReader {
 public:
  // Throws tsctl::Error (kFormat) if the entry's local header is damaged, it
  // is encrypted, or its compression method is neither stored nor deflate.
  RecordReader(const ByteSource& src, const ZipEntry& entry);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Reads up to `n` uncompressed bytes into `buf`; returns how many (0 at the
  // end). Throws tsctl::Error (kFormat) if the data is corrupt or produces
  // more bytes than the entry declares.
  size_t Read(char* buf, size_t n);
  // Reads exactly `n` bytes. Throws tsctl::Error (kFormat) if the record ends
  // first.
  void ReadExactly(char* buf, size_t n);
  // Skips `n` bytes (reading them when compressed). Throws like ReadExactly.
  void Skip(uint64_t n);
  uint64_t position() const { return produced_; }

 private:
  struct Inflater;
  const ByteSource& src_;
  const ZipEntry& entry_;
  uint64_t produced_ = 0;
  std::unique_ptr<Inflater> inflater_;  // null for stored records
};

}  // namespace tsctl
