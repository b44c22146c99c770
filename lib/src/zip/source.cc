#include "tsctl/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tsctl/error.h"

namespace tsctl {

Error::~Error() = default;

int ExitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage: return kExitUsage;
    case ErrorKind::kIo: return kExitIo;
    case ErrorKind::kFormat: return kExitFormat;
    case ErrorKind::kTorch: return kExitTorch;
    case ErrorKind::kUnavailable: return kExitUnavailable;
  }
  return kExitIo;
}

std::string ByteSource::ReadString(uint64_t pos, size_t n) const {
  std::string out(n, '\0');
  if (n > 0) Read(pos, out.data(), n);
  return out;
}

namespace {

void CheckRange(const ByteSource& src, uint64_t pos, size_t n) {
  if (pos > src.Size() || n > src.Size() - pos) {
    throw Error(ErrorKind::kFormat,
                "read of " + std::to_string(n) + " bytes at offset " +
                    std::to_string(pos) + " runs past the end of the file (" +
                    std::to_string(src.Size()) + " bytes): file is truncated");
  }
}

class FileSource : public ByteSource {
 public:
  FileSource(int fd, uint64_t size, std::string path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  ~FileSource() override { ::close(fd_); }

  uint64_t Size() const override { return size_; }
  const std::string& Name() const override { return path_; }

  void Read(uint64_t pos, void* buf, size_t n) const override {
    CheckRange(*this, pos, n);
    auto* out = static_cast<char*>(buf);
    while (n > 0) {
      ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(pos));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        throw Error(ErrorKind::kIo, "read failed: " +
                                        std::string(got < 0 ? std::strerror(errno)
                                                            : "unexpected end of file"));
      }
      out += got;
      pos += static_cast<uint64_t>(got);
      n -= static_cast<size_t>(got);
    }
  }

 private:
  int fd_;
  uint64_t size_;
  std::string path_;
};

class MemorySource : public ByteSource {
 public:
  MemorySource(std::string bytes, std::string name)
      : bytes_(std::move(bytes)), name_(std::move(name)) {}
  uint64_t Size() const override { return bytes_.size(); }
  const std::string& Name() const override { return name_; }
  void Read(uint64_t pos, void* buf, size_t n) const override {
    CheckRange(*this, pos, n);
    if (n > 0) std::memcpy(buf, bytes_.data() + pos, n);
  }

 private:
  std::string bytes_;
  std::string name_;
};

}  // namespace

std::unique_ptr<ByteSource> OpenFileSource(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::kIo, std::string("cannot read: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw Error(ErrorKind::kIo, std::string("cannot read: ") + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::kIo, "cannot read: is a directory");
  }
  return std::make_unique<FileSource>(fd, static_cast<uint64_t>(st.st_size), path);
}

std::unique_ptr<ByteSource> MakeMemorySource(std::string bytes, std::string name) {
  return std::make_unique<MemorySource>(std::move(bytes), std::move(name));
}

}  // namespace tsctl
