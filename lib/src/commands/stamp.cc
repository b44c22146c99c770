// `tsctl stamp`: checks, plans (stamp_plan.cc) and writes (stamp_write.cc).
#include "tsctl/stamp.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "stamp_internal.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"

namespace tsctl {
namespace {

// Opens `path` for writing in place. Throws tsctl::Error (kIo) if it cannot
// be opened for writing or is write-protected: the owner write bit is
// honoured even where the permission check would let us through (root in a
// container).
int OpenWritable(const std::string& path, const std::string& hint) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == EACCES || err == EROFS || err == EPERM) {
      throw Error(ErrorKind::kIo, "archive is not writable (" + std::string(std::strerror(err)) + ")" + (hint.empty() ? "" : "; " + hint));
    }
    throw Error(ErrorKind::kIo, std::string("cannot read: ") + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && (st.st_mode & S_IWUSR) == 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error(ErrorKind::kIo, std::string("archive is read-only (mode ") + mode + ")" + (hint.empty() ? "" : "; " + hint));
  }
  return fd;
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void CheckExtraName(const std::string& name) {
  auto bad = [&](const std::string& why) {
    throw Error(ErrorKind::kUsage, "bad extra record name '" + name + "': " + why);
  };
  if (name.empty()) bad("empty");
  if (name.size() > 1024) bad("longer than 1024 bytes");
  if (name[0] == '/') bad("absolute paths escape extra/");
  for (char c : name) {
    if (c == '\\') bad("backslashes are not allowed");
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) bad("control characters are not allowed");
  }
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    std::string part = name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty()) bad("empty path component");
    if (part == "..") bad("'..' escapes extra/");
    if (part == ".") bad("'.' components are not allowed");
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
}

namespace {

// The first `size` bytes of a file: the original inside a file that a kill
// left with a torn old view.
class PrefixSource final : public ByteSource {
 public:
  PrefixSource(std::unique_ptr<ByteSource> file, uint64_t size) : file_(std::move(file)), size_(size) {}
  uint64_t Size() const override { return size_; }
  void Read(uint64_t pos, void* buf, size_t n) const override {
    if (pos > size_ || n > size_ - pos) throw Error(ErrorKind::kFormat, Name() + ": read past the end of the archive");
    file_->Read(pos, buf, n);
  }
  const std::string& Name() const override { return file_->Name(); }

 private:
  std::unique_ptr<ByteSource> file_;
  uint64_t size_;
};

// Opens a TorchScript archive or a .pt2 (torch.export.load reads its extra/
// records too); the early .pt2 layout has no extra/ folder to stamp.
Archive OpenStampable(std::unique_ptr<ByteSource> src) {
  Archive a = Archive::OpenModel(std::move(src));
  if (a.kind() == ArchiveKind::kPt2Early) {
    throw Error(ErrorKind::kUnavailable,
                "an early .pt2 exported program (serialized_exported_program.json) has no extra/ records to stamp");
  }
  return a;
}

// Opens the archive. A file that a kill during the first write of an
// in-place stamp left with a torn old view (stamp::FindTornView; it may not
// open at all, its last end record being the torn view's) is put back first,
// as an interrupted stamp is, by --repair (then nullopt: nothing more to do)
// and by an in-place stamp; --output and --dry-run, which write nothing to
// it, read the original inside it. `torn` says whether it was such a file.
std::optional<Archive> OpenRollingBackTornView(const std::string& path, const StampOptions& options, bool in_place,
                                               bool& torn) {
  std::optional<Archive> archive;
  std::optional<stamp::Interrupted> view;
  try {
    archive.emplace(OpenStampable(OpenFileSource(path)));
  } catch (const Error&) {
    view = stamp::FindTornView(*OpenFileSource(path));
    if (!view) throw;
  }
  if (archive) {
    // It opened (the original's end record in reach): a torn view can only
    // lie behind the end record found.
    const ZipLayout& layout = archive->layout();
    if (archive->source().Size() <= layout.eocd_offset + 22 + layout.comment.size()) return archive;
    view = stamp::FindTornView(archive->source());
    if (!view) return archive;
  }
  torn = true;
  if (options.dry_run || !in_place) {
    if (options.repair) return std::nullopt;
    return OpenStampable(std::make_unique<PrefixSource>(OpenFileSource(path), view->old_size));
  }
  {
    FdCloser fd{OpenWritable(path, options.read_only_hint)};
    stamp::RollBack(fd.fd, path, *view);
  }
  if (options.repair) return std::nullopt;
  return OpenStampable(OpenFileSource(path));
}

}  // namespace

StampResult Stamp(const std::string& path, const StampOptions& options) {
  StampResult result;
  result.path = path;
  result.output = options.output.empty() ? path : options.output;
  result.dry_run = options.dry_run;
  const bool in_place = options.output.empty();

  // Every check before any write: the arguments, then that this is a
  // TorchScript archive whose structure we can vouch for, then (in place)
  // that it is writable, then the plan.
  if (!options.repair) stamp::CheckOptions(options);
  RequireRegularFile(path, "stamp reads and writes");  // read twice (check, then write): not a stream
  bool torn = false;
  std::optional<Archive> opened = OpenRollingBackTornView(path, options, in_place, torn);
  if (!opened) {
    result.repaired = true;
    return result;
  }
  Archive archive = std::move(*opened);
  FdCloser fd{in_place ? OpenWritable(path, options.read_only_hint) : -1};
  const std::optional<stamp::Interrupted> interrupted = stamp::FindInterrupted(archive.source(), archive.layout());
  result.repaired = torn || interrupted.has_value();
  if (options.repair) {
    if (interrupted && !options.dry_run) stamp::RollBack(fd.fd, path, *interrupted);
    return result;
  }
  stamp::Plan plan = stamp::MakePlan(archive, options);
  result.actions = plan.actions;
  result.producer = plan.producer;
  if (options.dry_run) return result;

  if (!in_place) {
    // The view an interrupted stamp left reads as the original: copy the
    // original's records, not the tail.
    const uint64_t copy_end = interrupted ? interrupted->old_cd_offset : archive.layout().central_directory_offset;
    result.bytes_written = stamp::WriteCopy(path, options.output, archive, plan, copy_end);
    return result;
  }
  if (interrupted) {
    stamp::RollBack(fd.fd, path, *interrupted);
    archive = OpenStampable(OpenFileSource(path));
    plan = stamp::MakePlan(archive, options);
    result.actions = plan.actions;
    result.producer = plan.producer;
  }
  result.bytes_written = stamp::WriteInPlace(fd.fd, path, archive, plan);
  return result;
}

}  // namespace tsctl
