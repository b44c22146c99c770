#include "tsctl/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tsctl/error.h"

namespace tsctl {
namespace {

Error IoError(const std::string& what, const std::string& path, int err) {
  return Error(ErrorKind::kIo, what + " " + path + ": " + std::strerror(err));
}

}  // namespace

namespace {

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

// Where a new file for `path` goes when `path` is a dangling symlink (or a
// chain of them): the last link's target, relative to that link's folder.
std::string FollowDangling(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::string target(4096, '\0');
    const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    if (n <= 0) return path;
    target.resize(static_cast<size_t>(n));
    path = target[0] == '/' ? target : DirOf(path) + "/" + target;
  }
  throw IoError("cannot write", path, ELOOP);
}

}  // namespace

AtomicFile::AtomicFile(std::string path, int mode) : path_(std::move(path)) {
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;  // follows links, /proc/self/fd/N included
  if (!exists && errno != ENOENT) throw IoError("cannot write", path_, errno);
  if (exists && S_ISDIR(st.st_mode)) throw IoError("cannot write", path_, EISDIR);
  if (exists && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
    // A device, FIFO or pipe is written straight into (it cannot be renamed
    // over: that would replace the node with a regular file).
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw IoError("cannot write", path_, errno);
    direct_ = true;
    return;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    throw Error(ErrorKind::kIo, "cannot write " + path_ + ": not a regular file, device or FIFO");
  }
  // A symlink is kept: its target is replaced, in the target's folder.
  if (exists) {
    char* real = ::realpath(path_.c_str(), nullptr);
    if (real) {
      target_ = real;
      std::free(real);
    } else {
      target_ = path_;
    }
  } else {
    target_ = FollowDangling(path_);
  }
  dir_ = DirOf(target_);
  if (exists) {
    mode_ = static_cast<int>(st.st_mode & 07777);  // as cp: a file written over keeps its mode
  } else if (mode >= 0) {
    mode_ = mode;
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
  if (direct_) {
    committed_ = true;
    return;
  }
  if (::fchmod(fd_, static_cast<mode_t>(mode_)) != 0 || ::fsync(fd_) != 0) throw IoError("cannot write", path_, errno);
  std::string proc = "/proc/self/fd/" + std::to_string(fd_);
  // A new name: link the finished file in under it, atomically.
  std::string tmp = target_ + ".tsctl-tmp";
  ::unlink(tmp.c_str());  // a complete file left by a kill in the window below
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, target_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
    if (errno != EEXIST) throw IoError("cannot create", target_, errno);
    // An existing name: link under a temporary name, then rename over the
    // target (the atomic step). A kill between the two leaves that name
    // behind, holding the complete new file; the next write to `path_`
    // removes it.
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      throw IoError("cannot create", tmp, errno);
    }
    if (::rename(tmp.c_str(), target_.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      throw IoError("cannot replace", target_, err);
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

void CopyFileAtomically(const std::string& from, const std::string& to) {
  const int src = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (src < 0) throw Error(ErrorKind::kIo, "cannot read " + from + ": " + std::strerror(errno));
  struct stat st {};
  try {
    if (::fstat(src, &st) != 0) throw Error(ErrorKind::kIo, "cannot read " + from + ": " + std::strerror(errno));
    AtomicFile f(to);
    f.CopyFrom(src, 0, static_cast<uint64_t>(st.st_size));
    f.Commit();
  } catch (...) {
    ::close(src);
    throw;
  }
  ::close(src);
}

}  // namespace tsctl
