#include "tsctl/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tsctl/error.h"

namespace tsctl {
namespace {

Error IoError(const std::string& what, const std::string& path, int err) {
  return Error(ErrorKind::kIo, what + " " + path + ": " + std::strerror(err));
}

}  // namespace

AtomicFile::AtomicFile(std::string path, int mode) : path_(std::move(path)) {
  size_t slash = path_.rfind('/');
  dir_ = slash == std::string::npos ? "." : (slash == 0 ? "/" : path_.substr(0, slash));
  struct stat st {};
  if (mode >= 0) {
    mode_ = mode;
  } else if (::stat(path_.c_str(), &st) == 0) {
    mode_ = static_cast<int>(st.st_mode & 07777);
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode_ = 0666 & ~static_cast<int>(mask);
  }
  fd_ = ::open(dir_.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd_ < 0) throw IoError("cannot write in", dir_, errno);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AtomicFile::Write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw IoError("cannot write", path_, w < 0 ? errno : ENOSPC);
    p += w;
    n -= static_cast<size_t>(w);
    size_ += static_cast<uint64_t>(w);
  }
}

void AtomicFile::CopyFrom(int src_fd, uint64_t offset, uint64_t n) {
  auto off = static_cast<loff_t>(offset);
  while (n > 0) {
    ssize_t c = ::copy_file_range(src_fd, &off, fd_, nullptr, n, 0);
    if (c < 0 && errno == EINTR) continue;
    if (c < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
      // Fall back to read/write.
      std::string buf(1 << 20, '\0');
      while (n > 0) {
        ssize_t r = ::pread(src_fd, buf.data(), std::min<uint64_t>(n, buf.size()), off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) throw IoError("cannot read the source of", path_, r < 0 ? errno : EIO);
        Write(buf.data(), static_cast<size_t>(r));
        off += r;
        n -= static_cast<uint64_t>(r);
      }
      return;
    }
    if (c <= 0) throw IoError("cannot copy into", path_, c < 0 ? errno : EIO);
    n -= static_cast<uint64_t>(c);
    size_ += static_cast<uint64_t>(c);
  }
}

void AtomicFile::Commit() {
  if (::fchmod(fd_, static_cast<mode_t>(mode_)) != 0 || ::fsync(fd_) != 0) throw IoError("cannot write", path_, errno);
  std::string proc = "/proc/self/fd/" + std::to_string(fd_);
  // A new name: link the finished file in under it, atomically.
  std::string tmp = path_ + ".tsctl-tmp";
  ::unlink(tmp.c_str());  // a complete file left by a kill in the window below
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
    if (errno != EEXIST) throw IoError("cannot create", path_, errno);
    // An existing name: link under a temporary name, then rename over the
    // target (the atomic step). A kill between the two leaves that name
    // behind, holding the complete new file; the next write to `path_`
    // removes it.
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      throw IoError("cannot create", tmp, errno);
    }
    if (::rename(tmp.c_str(), path_.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      throw IoError("cannot replace", path_, err);
    }
  }
  int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  committed_ = true;
}

void WriteFileAtomically(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.Write(text.data(), text.size());
  f.Commit();
}

}  // namespace tsctl
