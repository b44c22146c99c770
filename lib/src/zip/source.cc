#include "tsctl/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <poll.h>
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
    case ErrorKind::kRefused: return kExitFindings;
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
  int Descriptor() const override { return fd_; }

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

// Reads a stream to its end. The first byte is waited for with poll() and a
// limit (a FIFO with no writer would block a read for ever); after that,
// blocking reads until the writer closes it.
Error TooLarge(uint64_t max_bytes, const std::string& hint = "--max-input-size sets it") {
  return Error(ErrorKind::kIo, "input larger than the limit of " + std::to_string(max_bytes) + " bytes (" + hint + ")");
}

std::string ReadStream(int fd, uint64_t max_bytes, const std::string& hint) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  struct Restore {  // standard input's flags are shared with the shell
    int fd, flags;
    ~Restore() {
      if (flags >= 0) ::fcntl(fd, F_SETFL, flags);
    }
  } restore{fd, flags};
  std::string bytes;
  char buf[1 << 16];
  bool started = false;  // data came (or a writer did): from then on, blocking reads
  for (;;) {
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      throw Error(ErrorKind::kIo, std::string("read failed: ") + std::strerror(errno));
    }
    if (got > 0) {
      if (static_cast<uint64_t>(got) > max_bytes - bytes.size()) throw TooLarge(max_bytes, hint);
      bytes.append(buf, static_cast<size_t>(got));
    }
    if (got > 0 || started) {
      if (got == 0) break;  // end of the stream
      if (!started && flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
      started = true;
      continue;
    }
    // Nothing yet (EAGAIN), or a FIFO without a writer (reads as end of file
    // at once): wait for the first byte, with a limit.
    struct pollfd p {fd, POLLIN, 0};
    int ready = ::poll(&p, 1, kStreamWaitSeconds * 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw Error(ErrorKind::kIo, std::string("poll failed: ") + std::strerror(errno));
    if (ready == 0) {
      throw Error(ErrorKind::kIo, "nothing to read within " + std::to_string(kStreamWaitSeconds) +
                                      " s (a pipe or FIFO that nobody writes to?)");
    }
    if ((p.revents & POLLHUP) && !(p.revents & POLLIN)) break;  // the writer closed without writing
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    started = true;
  }
  return bytes;
}

bool IsStreamMode(mode_t mode) { return S_ISFIFO(mode) || S_ISCHR(mode) || S_ISSOCK(mode); }

}  // namespace

bool IsStream(const std::string& path) {
  if (path == "-") return true;
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && IsStreamMode(st.st_mode);
}

void RequireRegularFile(const std::string& path, const std::string& who, const std::string& alternative) {
  if (!IsStream(path)) return;
  throw Error(ErrorKind::kUsage, (path == "-" ? std::string("standard input") : std::string("a pipe or device")) +
                                     " is not a regular file: " + who + " archives from a regular file; save it to a file first" +
                                     (alternative.empty() ? "" : " " + alternative));
}

namespace {

std::unique_ptr<ByteSource> OpenWithLimit(const std::string& path, uint64_t max_stream_bytes, const std::string& hint) {
  if (path == "-") return std::make_unique<MemorySource>(ReadStream(STDIN_FILENO, max_stream_bytes, hint), "-");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO opens at once, writer or not
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
  if (IsStreamMode(st.st_mode)) {
    std::string bytes;
    try {
      bytes = ReadStream(fd, max_stream_bytes, hint);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return std::make_unique<MemorySource>(std::move(bytes), path);
  }
  return std::make_unique<FileSource>(fd, static_cast<uint64_t>(st.st_size), path);
}

}  // namespace

std::unique_ptr<ByteSource> OpenFileSource(const std::string& path, uint64_t max_stream_bytes) {
  return OpenWithLimit(path, max_stream_bytes, "--max-input-size sets it");
}

std::string ReadInputFile(const std::string& path, uint64_t max_bytes, const std::string& limit_hint) {
  std::unique_ptr<ByteSource> src = OpenWithLimit(path, max_bytes, limit_hint);
  if (src->Size() > max_bytes) throw TooLarge(max_bytes, limit_hint);
  return src->ReadString(0, static_cast<size_t>(src->Size()));
}

std::unique_ptr<ByteSource> MakeMemorySource(std::string bytes, std::string name) {
  return std::make_unique<MemorySource>(std::move(bytes), std::move(name));
}

}  // namespace tsctl
