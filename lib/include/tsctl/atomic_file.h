// The one place tsctl writes whole files: the target either keeps its old
// content or gets the complete new one. The data goes to an unnamed O_TMPFILE
// linked in only when complete: under a new name directly; over an existing
// file through "<path>.tsctl-tmp" and rename, so a kill in between can leave
// that name holding the complete new file (removed by the next write).
// What `path` is decides how it is written:
//  - missing or a regular file: replaced atomically as above;
//  - a symlink (a chain of them, dangling or not): its target is replaced in
//    the target's folder, and the link kept;
//  - a character or block device, a FIFO or a pipe (/proc/self/fd/N,
//    /dev/stdout): written straight into, in order (not atomic: there is
//    nothing to rename over);
//  - a directory, socket or anything else: refused (kIo), nothing written.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace tsctl {

class AtomicFile {
 public:
  // Prepares to replace `path`. A file written over keeps its mode (as cp
  // does); a new one gets `mode` (default: 0666 less the umask). Throws tsctl::Error (kIo) if the
  // folder cannot be written.
  explicit AtomicFile(std::string path, int mode = -1);
  ~AtomicFile();  // discards the data unless Commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  int fd() const { return fd_; }
  // Writes all of `n` bytes at the current end. Throws tsctl::Error (kIo).
  void Write(const void* data, size_t n);
  // Copies `n` bytes from `src_fd` at `offset` (copy_file_range, in-kernel).
  void CopyFrom(int src_fd, uint64_t offset, uint64_t n);
  uint64_t size() const { return size_; }
  // fsyncs and atomically puts the file in place. Throws tsctl::Error (kIo).
  void Commit();

 private:
  std::string path_;
  std::string target_;  // the regular file replaced (path_ with links resolved)
  std::string dir_;
  bool direct_ = false;  // a device, FIFO or pipe, written straight into
  int fd_ = -1;
  int mode_ = 0644;
  uint64_t size_ = 0;
  bool committed_ = false;
};

// Writes `text` to `path` through AtomicFile.
void WriteFileAtomically(const std::string& path, const std::string& text);
// Copies the file `from` to `to` through AtomicFile, in the kernel
// (copy_file_range): nothing of it is held in memory. Throws tsctl::Error (kIo).
void CopyFileAtomically(const std::string& from, const std::string& to);

}  // namespace tsctl
