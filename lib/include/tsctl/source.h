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
  // The open file descriptor read from, for a regular file; -1 otherwise.
  // A child forked later inherits it: LibTorch is then handed
  // "/proc/self/fd/N", the very file tsctl checked, never the path again.
  virtual int Descriptor() const { return -1; }

  std::string ReadString(uint64_t pos, size_t n) const;
};

// The most bytes tsctl reads from a stream or takes as a whole input file
// (--max-input-size): 4 GiB.
inline constexpr uint64_t kDefaultMaxInputBytes = uint64_t{4} << 30;

// Opens `path` for reading. Throws tsctl::Error (kIo, "cannot read: <cause>")
// if it cannot be opened or is a directory. "-" is standard input. A stream
// (standard input, a pipe, a FIFO, `<(cat x.pt)`, a character device) cannot
// be read at random, so it is read whole into memory; when no byte arrives
// within kStreamWaitSeconds (a FIFO nobody writes to) it fails with kIo
// instead of waiting for ever, and once more than `max_stream_bytes` came
// (`yes | tsctl inspect -`, a link to /dev/zero) it fails with kIo in one
// line naming the limit, instead of reading until memory runs out. A regular
// file is read at random, never whole: no limit applies.
std::unique_ptr<ByteSource> OpenFileSource(const std::string& path, uint64_t max_stream_bytes = kDefaultMaxInputBytes);
inline constexpr int kStreamWaitSeconds = 30;

// Reads all of `path` ("-": standard input), a regular file or a stream,
// as an input (stamp --file, --meta). Throws tsctl::Error (kIo) if it
// cannot be read, is a directory, or holds more than `max_bytes` (the message
// names the limit and `limit_hint`, what sets it).
std::string ReadInputFile(const std::string& path, uint64_t max_bytes = kDefaultMaxInputBytes,
                          const std::string& limit_hint = "--max-input-size sets it");

// Whether `path` ("-" included) is a stream rather than a regular file (or a
// directory, or missing): what LibTorch, which reads archives by path, and an
// in-place stamp cannot take.
bool IsStream(const std::string& path);

// Throws tsctl::Error (kUsage) naming `who` ("LibTorch loads", "stamp reads
// and writes") when `path` is a stream: "a pipe or device is not a regular
// file: LibTorch loads archives from a regular file; save it to a file
// first", and `alternative` after that when given ("or pass --no-load").
void RequireRegularFile(const std::string& path, const std::string& who, const std::string& alternative = "");

// Wraps a copy of `bytes`.
std::unique_ptr<ByteSource> MakeMemorySource(std::string bytes,
                                             std::string name = "<memory>");

}  // namespace tsctl
