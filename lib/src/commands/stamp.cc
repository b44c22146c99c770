// `tsctl stamp`: checks, plans (stamp_plan.cc) and writes (stamp_write.cc).
#include "tsctl/stamp.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>
#include <chrono>
#include <algorithm>

#include "../text/json_util.h"
#include "stamp_internal.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "zip_model.h"

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

// Takes an OFD lock (`type`: F_WRLCK to write, F_RDLCK to read) on the
// whole file behind `fd`, waiting up to `wait_seconds`. The lock is released
// when the descriptor is closed. Throws tsctl::Error (kIo) if another stamp
// still holds a conflicting one by then.
void Lock(int fd, short type, double wait_seconds) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, wait_seconds));
  while (::fcntl(fd, F_OFD_SETLK, &lock) != 0) {
    if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
      throw Error(ErrorKind::kIo, std::string("cannot lock the archive: ") + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      char waited[32];
      std::snprintf(waited, sizeof waited, "%g", wait_seconds);
      throw Error(ErrorKind::kIo, std::string("another tsctl stamp is writing this archive (waited ") + waited +
                                      " s; --wait sets how long)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

void CheckExtraName(const std::string& name) {
  auto bad = [&](const std::string& why) {
    throw Error(ErrorKind::kUsage, "bad extra record name '" + name + "': " + why);
  };
  if (name.empty()) bad("empty");
  if (name.size() > 1024) bad("longer than 1024 bytes");
  if (name[0] == '/') bad("absolute paths escape extra/");
  // The writer sets the ZIP UTF-8 flag on every name (APPNOTE 4.4.4 bit 11),
  // and Python's zipfile then refuses an archive holding bytes that are not
  // UTF-8: such a name would make the archive unreadable to some readers.
  if (!IsValidUtf8(name)) bad("not valid UTF-8 (the archive marks its names as UTF-8)");
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

// Opens a TorchScript archive or a .pt2 (torch.export.load reads its extra/
// records too), unless its format's row refuses it (ZipModel::refuse_stamp).
Archive OpenStampable(std::unique_ptr<ByteSource> src) {
  Archive a = Archive::OpenModel(std::move(src));
  if (const ZipModel& model = ZipModelOf(a); model.refuse_stamp) model.refuse_stamp(a);
  return a;
}

// Opens the archive, trusting a journal only when needed (see
// FindInterrupted): a consistent archive is read as it stands, whatever tail
// it carries. A file that an interrupted in-place stamp left (a proven
// journal, or a torn old view: FindTornView; such a file may not open at
// all) is put back first by --repair (then nullopt: nothing more to do) and
// by an in-place stamp; --output and --dry-run, which write nothing to it,
// read the original inside it. `repaired` says whether it was such a file.
// Throws tsctl::Error (kFormat) for an archive that readers could read
// differently (Archive::Ambiguities) and that no journal explains.
std::optional<Archive> OpenRecovering(const std::string& path, const StampOptions& options, int fd,
                                      bool& repaired) {
  const bool in_place = fd >= 0;
  std::optional<Archive> archive;
  std::optional<stamp::Interrupted> view;
  try {
    archive.emplace(OpenStampable(OpenFileSource(path)));
  } catch (const Error&) {
    view = stamp::FindTornView(*OpenFileSource(path));
    if (!view) throw;
  }
  if (archive) {
    view = stamp::FindInterrupted(archive->source(), archive->layout());
    if (!view && !archive->Ambiguities().empty()) view = stamp::FindTornView(archive->source());
    if (!view) {
      const std::vector<std::string>& found = archive->Ambiguities();
      if (found.empty() && !archive->LayoutNotes().empty()) {
        throw Error(ErrorKind::kFormat, "not stamped: " + archive->LayoutNotes().front());
      }
      if (found.empty()) return archive;
      throw Error(ErrorKind::kFormat, "ambiguous archive, not stamped: " + found.front() +
                                          (found.size() > 1 ? " (and " + std::to_string(found.size() - 1) + " more)" : "") +
                                          " (tsctl validate lists every conflict)");
    }
  }
  repaired = true;
  if (options.dry_run || !in_place) {
    if (options.repair) return std::nullopt;
    return OpenStampable(stamp::RolledBackSource(OpenFileSource(path), *view));
  }
  stamp::RollBack(fd, path, *view);
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
  // An in-place write holds an exclusive lock from before the first read to
  // after the last write: a second stamp waits, then reads what the first
  // wrote (never two writers at once). A dry run of an in-place stamp (the
  // check pass before every stamp) holds a shared lock while it reads, so it
  // never reads a file that a stamp is changing.
  FdCloser fd{-1};
  if (in_place) {
    try {
      fd.fd = OpenWritable(path, options.read_only_hint);
    } catch (const Error&) {
      (void)OpenStampable(OpenFileSource(path));  // not an archive at all: say that first
      throw;
    }
  }
  if (fd.fd >= 0) Lock(fd.fd, options.dry_run ? F_RDLCK : F_WRLCK, options.wait_seconds);
  bool repaired = false;
  std::optional<Archive> opened = OpenRecovering(path, options, options.dry_run ? -1 : fd.fd, repaired);
  result.repaired = repaired;
  if (!opened || options.repair) return result;
  Archive archive = std::move(*opened);
  stamp::Plan plan = stamp::MakePlan(archive, options);
  result.actions = plan.actions;
  Json(result.producer) = plan.producer;
  if (options.dry_run) return result;

  if (!in_place) {
    result.bytes_written =
        stamp::WriteCopy(path, options.output, archive, plan, archive.layout().central_directory_offset);
    return result;
  }
  result.bytes_written = stamp::WriteInPlace(fd.fd, path, archive, plan);
  return result;
}

}  // namespace tsctl
