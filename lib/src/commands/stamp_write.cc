// stamp's executor: the write sequence that changes an archive in place, and
// the copy to --output.
//
// THE INVARIANT. Readers find a ZIP archive from its end: Python's zipfile
// (and Java's) take the last end-record signature in the final 64 KiB and
// read the central directory at (where the end record sits) - (its size),
// shifting every offset by the difference ("concat"); libzip tries every end
// record in that window and keeps the most consistent; miniz (LibTorch) and
// Info-ZIP take the last one, with absolute offsets. So at every moment of
// the sequence below the file ends with a complete end record whose central
// directory lies right before it, at the offset it declares, and every other
// end record a reader may pick describes the original or the new archive.
//
// An archive of size S is [records][CD0][T0] (T0: the end records). The
// stamped one is [records][CD0][T0 with its signature cleared][N][CD1][T1],
// E bytes long (N: the new records, CD1: the kept central records + the new
// ones, T1: its end records). Steps, each ending with fdatasync:
//   1. Write the "old view" V = [journal][CD0 copy][T0'] at E, past the end
//      (the file becomes [original][hole][V]). T0' declares the copy's
//      offset, so V is a complete original archive for every reader; the
//      journal (S, CD0's and T0's offsets) lets the next stamp undo it.
//      A kill (a fatal signal) can cut a write only between pages, so V goes
//      a little past E where needed (the gap is hole too): a V of one page
//      or less inside one page, never torn; a longer V from a page boundary,
//      so that a torn one (the original, a hole, V's first pages: no end
//      record at the end) still has its journal where FindTornView looks.
//   2. Write N at S and CD1 after it (inside the hole; nothing refers to it).
//   3. Write T1 at E - |T1|. Readers taking the last end record still see V;
//      libzip may pick T1, which now describes the complete new archive.
//   4. Clear T0's signature, so that libzip cannot pick the original after
//      the commit (it prefers the end record whose records span more bytes).
//   5. Commit: truncate to E, dropping V. T1 is now the last end record.
// A kill at any moment leaves the original (before 5) or the new archive
// (after 5); a power loss likewise, given that an extending write (step 1)
// becomes durable together with the size it sets (ext4 and XFS order data
// before size updates) and that truncation is atomic (journaled metadata).
// Writes inside the file (2-4) may be cut at any byte or reordered between
// two syncs: V stays last until 5. The next stamp, or `stamp --repair`, finds
// the journal behind the last end record and puts the file back byte for
// byte (RollBack) before doing anything else.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "stamp_internal.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "tsctl/zip.h"

namespace tsctl::stamp {
namespace {

// Where the old view of `size` bytes goes: at `end` when it fits in the page
// there, else on the next page boundary.
uint64_t ViewOffset(uint64_t end, uint64_t size) {
  if (size <= kPage && end % kPage + size <= kPage) return end;
  return (end + kPage - 1) / kPage * kPage;
}


// Test hook: TSCTL_FAULT_KILL_AT=N kills the process at the N-th write step
// of a stamp, so tests can check crash safety at every step deterministically.
void FaultPoint() {
  static long kill_at = [] {
    const char* v = std::getenv("TSCTL_FAULT_KILL_AT");
    return v ? std::atol(v) : 0L;
  }();
  static long step = 0;
  if (kill_at > 0 && ++step == kill_at) ::raise(SIGKILL);
}

void PWriteAll(int fd, const char* data, uint64_t n, uint64_t offset, const std::string& path) {
  constexpr uint64_t kChunk = 1 << 20;
  while (n > 0) {
    FaultPoint();
    size_t want = static_cast<size_t>(std::min(n, kChunk));
    ssize_t w = ::pwrite(fd, data, want, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw Error(ErrorKind::kIo, "cannot write " + path + ": " + std::strerror(w < 0 ? errno : ENOSPC));
    data += w;
    n -= static_cast<uint64_t>(w);
    offset += static_cast<uint64_t>(w);
  }
}
void PWriteAll(int fd, const std::string& s, uint64_t offset, const std::string& path) {
  PWriteAll(fd, s.data(), s.size(), offset, path);
}

void Sync(int fd, const std::string& path) {
  FaultPoint();
  if (::fdatasync(fd) != 0) throw Error(ErrorKind::kIo, "cannot sync " + path + ": " + std::strerror(errno));
  FaultPoint();
}

void Truncate(int fd, uint64_t size, const std::string& path) {
  FaultPoint();
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    throw Error(ErrorKind::kIo, "cannot truncate " + path + ": " + std::strerror(errno));
  }
  Sync(fd, path);
}

}  // namespace

void RollBack(int fd, const std::string& path, const Interrupted& at) {
  if (::pwrite(fd, kEocdSignature, 4, static_cast<off_t>(at.old_eocd_offset)) != 4) {
    throw Error(ErrorKind::kIo, "cannot repair an interrupted stamp: " + std::string(std::strerror(errno)));
  }
  Sync(fd, path);
  Truncate(fd, at.old_size, path);
}

uint64_t WriteInPlace(int fd, const std::string& path, const Archive& archive, const Plan& plan) {
  const ZipLayout& layout = archive.layout();
  const uint64_t old_size = archive.source().Size();
  const ZipTail tail = MakeWriter(archive, plan, old_size).WriteEndOfFile(layout.zip64, layout.comment);
  const uint64_t end = tail.end_of_file();

  // The old view: the journal, a copy of CD0 and end records declaring it.
  const Interrupted journal{old_size, layout.central_directory_offset, layout.eocd_offset};
  const std::string cd0 = archive.source().ReadString(layout.central_directory_offset, layout.central_directory_size);
  // (Its end records' size depends on its offset past 4 GiB, and only grows
  // with it: placed again once at most.)
  uint64_t view_at = end;
  std::string view;
  while (true) {
    view = EncodeJournal(journal) + cd0 +
           ZipEndRecords(layout.entries.size(), view_at + kJournalSize, cd0.size(), layout.zip64, layout.comment);
    const uint64_t placed = ViewOffset(end, view.size());
    if (placed <= view_at) break;
    view_at = placed;
  }

  bool cleared = false;
  try {
    PWriteAll(fd, view, view_at, path);  // 1
    Sync(fd, path);
    PWriteAll(fd, tail.records, tail.records_offset, path);  // 2
    PWriteAll(fd, tail.central, tail.central_offset, path);
    Sync(fd, path);
    PWriteAll(fd, tail.end, tail.end_offset, path);  // 3
    Sync(fd, path);
    cleared = true;
    PWriteAll(fd, std::string(4, '\0'), layout.eocd_offset, path);  // 4
    Sync(fd, path);
    Truncate(fd, end, path);  // 5: commit
  } catch (...) {
    // Best effort: the original bytes are all there but T0's signature.
    if (!cleared || ::pwrite(fd, kEocdSignature, 4, static_cast<off_t>(layout.eocd_offset)) == 4) {
      if (::fdatasync(fd) == 0 && ::ftruncate(fd, static_cast<off_t>(old_size)) == 0) ::fdatasync(fd);
    }
    throw;
  }
  return end - old_size;
}

uint64_t WriteCopy(const std::string& path, const std::string& output, const Archive& archive,
                   const Plan& plan, uint64_t copy_end) {
  int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd < 0) throw Error(ErrorKind::kIo, std::string("cannot read: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{rfd};
  struct stat st {};
  if (::fstat(rfd, &st) != 0) throw Error(ErrorKind::kIo, std::string("cannot stat: ") + std::strerror(errno));
  AtomicFile out(output, static_cast<int>(st.st_mode & 07777));
  const ZipTail tail = MakeWriter(archive, plan, copy_end).WriteEndOfFile(archive.layout().zip64, archive.layout().comment);
  out.CopyFrom(rfd, 0, copy_end);
  out.Write(tail.records.data(), tail.records.size());
  out.Write(tail.central.data(), tail.central.size());
  out.Write(tail.end.data(), tail.end.size());
  out.Commit();
  return out.size();
}

}  // namespace tsctl::stamp
