// The journal of an in-place stamp (see the invariant in stamp_write.cc):
// written first, read by the next stamp to undo an interrupted one. It comes
// from the file, so it is trusted only where the file proves it: see
// FindInterrupted in stamp_internal.h.
#include <algorithm>
#include <cstring>
#include <memory>

#include "stamp_internal.h"
#include "tsctl/error.h"
#include "tsctl/zip.h"

namespace tsctl::stamp {
namespace {

constexpr char kJournalMagic[8] = {'T', 'S', 'C', 'T', 'L', 'J', '0', '1'};
constexpr uint64_t kEocdSize = 22;
constexpr uint64_t kTornScanBytes = 256ull << 20;

void PutLe64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t Get(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + static_cast<size_t>(i)]);
  return v;
}

// The journal at `at`, if the bytes there are one (magic, CRC-32) and it
// describes a file that ended before it, with its end record inside it.
std::optional<Interrupted> ReadJournal(const ByteSource& src, uint64_t at) {
  if (at > src.Size() || src.Size() - at < kJournalSize) return std::nullopt;
  const std::string j = src.ReadString(at, kJournalSize);
  if (j.compare(0, sizeof kJournalMagic, kJournalMagic, sizeof kJournalMagic) != 0) return std::nullopt;
  if (Get(j, 32, 4) != Crc32(j.data(), 32)) return std::nullopt;
  Interrupted found{Get(j, 8, 8), Get(j, 16, 8), Get(j, 24, 8)};
  if (found.old_size > at || found.old_cd_offset > found.old_eocd_offset ||
      found.old_eocd_offset + kEocdSize > found.old_size) {
    return std::nullopt;
  }
  return found;
}

// The file as a rollback to `j` would leave it: cut at old_size, the end
// record's signature back.
class RolledBack final : public ByteSource {
 public:
  RolledBack(const ByteSource& file, const Interrupted& j) : file_(file), j_(j) {}
  RolledBack(std::unique_ptr<ByteSource> file, const Interrupted& j) : file_(*file), owned_(std::move(file)), j_(j) {}
  uint64_t Size() const override { return j_.old_size; }
  const std::string& Name() const override { return file_.Name(); }
  void Read(uint64_t pos, void* buf, size_t n) const override {
    if (pos > j_.old_size || n > j_.old_size - pos) throw Error(ErrorKind::kFormat, "read past the rolled-back end");
    file_.Read(pos, buf, n);
    auto* out = static_cast<char*>(buf);
    for (uint64_t i = 0; i < 4; ++i) {
      const uint64_t at = j_.old_eocd_offset + i;
      if (at >= pos && at < pos + n) out[at - pos] = kEocdSignature[i];
    }
  }

 private:
  const ByteSource& file_;
  std::unique_ptr<ByteSource> owned_;
  Interrupted j_;
};

// True if rolling back to `j` gives an archive whose end record is the one
// `j` names and whose central directory starts at old_cd_offset with `cd`
// (all of it when `whole`; else the directory and `cd` agree as far as the
// shorter goes).
bool RollbackGives(const ByteSource& src, const Interrupted& j, const std::string& cd, bool whole) {
  try {
    RolledBack restored(src, j);
    const ZipLayout layout = ReadZipLayout(restored);
    if (layout.eocd_offset != j.old_eocd_offset || layout.central_directory_offset != j.old_cd_offset) return false;
    if (whole && layout.central_directory_size != cd.size()) return false;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(cd.size(), layout.central_directory_size));
    return n > 0 && restored.ReadString(j.old_cd_offset, n) == cd.substr(0, n);
  } catch (const Error&) {
    return false;
  }
}

// True if a complete end record carrying `comment` ends where a stamp that
// placed its old view at `view_at` ended the new archive (at view_at, or
// earlier in the page before it: ViewOffset in stamp_write.cc).
bool NewEndRecordBefore(const ByteSource& src, uint64_t view_at, const std::string& comment) {
  const uint64_t span = kPage + kEocdSize + comment.size();
  const uint64_t from = view_at > span ? view_at - span : 0;
  const std::string bytes = src.ReadString(from, view_at - from);
  for (uint64_t end = view_at; end >= from + kEocdSize + comment.size() && end + kPage > view_at; --end) {
    const uint64_t at = end - kEocdSize - comment.size() - from;
    if (bytes.compare(at, 4, kEocdSignature, 4) == 0 && Get(bytes, at + 20, 2) == comment.size() &&
        bytes.compare(at + kEocdSize, comment.size(), comment) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string EncodeJournal(const Interrupted& j) {
  std::string s(kJournalMagic, sizeof kJournalMagic);
  PutLe64(s, j.old_size);
  PutLe64(s, j.old_cd_offset);
  PutLe64(s, j.old_eocd_offset);
  const uint32_t crc = Crc32(s.data(), s.size());
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  s.append(4, '\0');
  return s;
}

std::unique_ptr<ByteSource> RolledBackSource(std::unique_ptr<ByteSource> file, const Interrupted& j) {
  return std::make_unique<RolledBack>(std::move(file), j);
}

std::optional<Interrupted> JournalBeforeDirectory(const ByteSource& src, const ZipLayout& layout) {
  const uint64_t cd = layout.central_directory_offset;
  if (cd < kJournalSize || layout.trailer_offset != cd + layout.central_directory_size) return std::nullopt;
  return ReadJournal(src, cd - kJournalSize);
}

std::optional<Interrupted> FindInterrupted(const ByteSource& src, const ZipLayout& layout) {
  const std::optional<Interrupted> journal = JournalBeforeDirectory(src, layout);
  if (!journal) return std::nullopt;
  const uint64_t view_at = layout.central_directory_offset - kJournalSize;
  const bool shows = src.ReadString(journal->old_eocd_offset, 4) == std::string(kEocdSignature, 4) ||
                     NewEndRecordBefore(src, view_at, layout.comment);
  if (!shows) return std::nullopt;
  const std::string cd = src.ReadString(layout.central_directory_offset, layout.central_directory_size);
  if (!RollbackGives(src, *journal, cd, true)) return std::nullopt;
  return journal;
}

std::optional<Interrupted> FindTornView(const ByteSource& src) {
  const uint64_t size = src.Size();
  if (size % kPage != 0) return std::nullopt;
  const uint64_t lowest = size > kTornScanBytes ? size - kTornScanBytes : 0;
  for (uint64_t at = size; at >= lowest + kPage;) {
    at -= kPage;
    const std::optional<Interrupted> found = ReadJournal(src, at);
    if (!found) continue;
    // The original's end record is intact (the tear came before step 4), and
    // the view's copy of the directory, as far as it got, is the original's.
    if (src.ReadString(found->old_eocd_offset, 4) != std::string(kEocdSignature, 4)) return std::nullopt;
    const std::string copy = src.ReadString(at + kJournalSize, std::min<uint64_t>(size - at - kJournalSize, 1 << 20));
    if (!RollbackGives(src, *found, copy, false)) return std::nullopt;
    return found;
  }
  return std::nullopt;
}

}  // namespace tsctl::stamp

namespace tsctl {

std::optional<std::string> DescribeStampJournal(const Archive& archive) {
  const std::optional<stamp::Interrupted> j = stamp::JournalBeforeDirectory(archive.source(), archive.layout());
  if (!j) return std::nullopt;
  if (stamp::FindInterrupted(archive.source(), archive.layout())) {
    return "an interrupted in-place stamp left its old view at the end of the file (readers see the original); "
           "the next stamp, or stamp --repair, removes it";
  }
  return "a stamp journal sits before the central directory (at offset " +
         std::to_string(archive.layout().central_directory_offset - stamp::kJournalSize) +
         ") but nothing proves an interrupted stamp: stamp leaves it alone and reads the archive as it stands";
}

}  // namespace tsctl
