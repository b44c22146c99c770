// Random-access byte sources: archives are read through this seam so that the
// library and its tests work on files and on bytes in memory alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tsctl {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Total size in bytes.
  virtual uint64_t Size() const = 0;
  // Reads exactly `n` bytes at `pos` into `buf`. Throws tsctl::Error (kFormat)
  // if the range lies past the end, (kIo) if the read fails.
  virtual void Read(uint64_t pos, void* buf, size_t n) const = 0;
  // A name for messages (the path, or "<memory>").
  virtual const std::string& Name() const = 0;

  std::string ReadString(uint64_t pos, size_t n) const;
};

// Opens `path` for reading. Throws tsctl::Error (kIo, "cannot read: <cause>")
// if it cannot be opened or is a directory.
std::unique_ptr<ByteSource> OpenFileSource(const std::string& path);

// Wraps a copy of `bytes`.
std::unique_ptr<ByteSource> MakeMemorySource(std::string bytes,
                                             std::string name = "<memory>");

}  // namespace tsctl
