#include "tsctl/stamp.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <set>

#include "tsctl/archive.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/producer.h"
#include "tsctl/zip.h"

namespace tsctl {
namespace {

constexpr uint64_t kAlignment = 64;  // PyTorch's kFieldAlignment
constexpr uint64_t kPage = 4096;

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

void Put16(std::string& s, uint64_t v) {
  s.push_back(static_cast<char>(v & 0xff));
  s.push_back(static_cast<char>((v >> 8) & 0xff));
}
void Put32(std::string& s, uint64_t v) {
  Put16(s, v & 0xffff);
  Put16(s, (v >> 16) & 0xffff);
}
void Put64(std::string& s, uint64_t v) {
  Put32(s, v & 0xffffffffu);
  Put32(s, v >> 32);
}

struct NewRecord {
  std::string name;  // full name, with the root folder
  std::string data;
  uint32_t crc = 0;
  uint64_t offset = 0;  // of the local header
};

// Appends a stored record whose data starts on a 64-byte boundary, padding
// the local header with an "FB" extra field as PyTorch's writer does.
void AppendLocalRecord(std::string& out, uint64_t base, NewRecord& r) {
  r.offset = base + out.size();
  const bool zip64 = r.data.size() >= 0xFFFFFFFFu;
  std::string extra;
  if (zip64) {
    Put16(extra, 0x0001);
    Put16(extra, 16);
    Put64(extra, r.data.size());
    Put64(extra, r.data.size());
  }
  uint64_t unpadded = r.offset + 30 + r.name.size() + extra.size() + 4;
  uint64_t pad = (kAlignment - unpadded % kAlignment) % kAlignment;
  Put16(extra, 0x4246);  // "FB"
  Put16(extra, pad);
  extra.append(pad, 'Z');
  Put32(out, 0x04034b50);
  Put16(out, zip64 ? 45 : 20);
  Put16(out, 0x0800);  // UTF-8 names
  Put16(out, kZipStored);
  Put16(out, 0);  // time and date as PyTorch writes them
  Put16(out, 0);
  Put32(out, r.crc);
  Put32(out, zip64 ? 0xFFFFFFFFu : r.data.size());
  Put32(out, zip64 ? 0xFFFFFFFFu : r.data.size());
  Put16(out, r.name.size());
  Put16(out, extra.size());
  out += r.name;
  out += extra;
  out += r.data;
}

void AppendCentralRecord(std::string& out, const NewRecord& r) {
  const bool big_size = r.data.size() >= 0xFFFFFFFFu;
  const bool big_offset = r.offset >= 0xFFFFFFFFu;
  std::string extra;
  if (big_size || big_offset) {
    Put16(extra, 0x0001);
    Put16(extra, (big_size ? 16 : 0) + (big_offset ? 8 : 0));
    if (big_size) {
      Put64(extra, r.data.size());
      Put64(extra, r.data.size());
    }
    if (big_offset) Put64(extra, r.offset);
  }
  Put32(out, 0x02014b50);
  Put16(out, (big_size || big_offset) ? 45 : 20);  // made by
  Put16(out, (big_size || big_offset) ? 45 : 20);  // needed
  Put16(out, 0x0800);
  Put16(out, kZipStored);
  Put16(out, 0);
  Put16(out, 0);
  Put32(out, r.crc);
  Put32(out, big_size ? 0xFFFFFFFFu : r.data.size());
  Put32(out, big_size ? 0xFFFFFFFFu : r.data.size());
  Put16(out, r.name.size());
  Put16(out, extra.size());
  Put16(out, 0);  // comment
  Put16(out, 0);  // disk
  Put16(out, 0);  // internal attributes
  Put32(out, 0);  // external attributes
  Put32(out, big_offset ? 0xFFFFFFFFu : r.offset);
  out += r.name;
  out += extra;
}

// The end records. ZIP64 when asked or when a field needs it.
std::string Trailer(uint64_t count, uint64_t cd_offset, uint64_t cd_size, bool zip64, const std::string& comment) {
  std::string t;
  zip64 = zip64 || count >= 0xFFFF || cd_offset >= 0xFFFFFFFFu || cd_size >= 0xFFFFFFFFu;
  if (zip64) {
    uint64_t z64 = cd_offset + cd_size;
    Put32(t, 0x06064b50);
    Put64(t, 44);
    Put16(t, 45);
    Put16(t, 45);
    Put32(t, 0);
    Put32(t, 0);
    Put64(t, count);
    Put64(t, count);
    Put64(t, cd_size);
    Put64(t, cd_offset);
    Put32(t, 0x07064b50);
    Put32(t, 0);
    Put64(t, z64);
    Put32(t, 1);
  }
  Put32(t, 0x06054b50);
  Put16(t, 0);
  Put16(t, 0);
  Put16(t, zip64 ? 0xFFFF : count);
  Put16(t, zip64 ? 0xFFFF : count);
  Put32(t, zip64 ? 0xFFFFFFFFu : cd_size);
  Put32(t, zip64 ? 0xFFFFFFFFu : cd_offset);
  Put16(t, comment.size());
  t += comment;
  return t;
}

// Deep merge: objects merge key by key, anything else replaces.
void Merge(nlohmann::json& into, const nlohmann::json& from) {
  for (auto it = from.begin(); it != from.end(); ++it) {
    if (it->is_object() && into.contains(it.key()) && into[it.key()].is_object()) {
      Merge(into[it.key()], *it);
    } else {
      into[it.key()] = *it;
    }
  }
}

void SetDotted(nlohmann::json& j, const std::string& key, const std::string& raw) {
  if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos) {
    throw Error(ErrorKind::kUsage, "bad --set key '" + key + "'");
  }
  nlohmann::json value = nlohmann::json::parse(raw, nullptr, false);
  if (value.is_discarded()) value = raw;
  nlohmann::json* at = &j;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (dot == std::string::npos) {
      (*at)[part] = value;
      return;
    }
    if (!(*at)[part].is_object()) (*at)[part] = nlohmann::json::object();
    at = &(*at)[part];
    start = dot + 1;
  }
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

void Sync(int fd, const std::string& path) {
  FaultPoint();
  if (::fdatasync(fd) != 0) throw Error(ErrorKind::kIo, "cannot sync " + path + ": " + std::strerror(errno));
  FaultPoint();
}

// A trailer left by an interrupted in-place stamp: the file ends with a copy
// of the old end record, separated from its central directory by the
// partial new data. Returns the size the file had before that stamp, or 0.
uint64_t InterruptedStampEnd(const ByteSource& src, const ZipLayout& layout) {
  const uint64_t cd_end = layout.central_directory_offset + layout.central_directory_size;
  // Where the last trailer starts. A ZIP64 locator in a copied trailer still
  // points at the original ZIP64 record, so measure the copy from its end.
  uint64_t start = layout.eocd_offset;
  if (layout.zip64 && layout.trailer_offset + 12 <= src.Size()) {
    std::string size_field = src.ReadString(layout.trailer_offset + 4, 8);
    uint64_t record_size = 0;  // counts the bytes after the 12-byte head
    for (int i = 7; i >= 0; --i) record_size = (record_size << 8) | static_cast<uint8_t>(size_field[static_cast<size_t>(i)]);
    const uint64_t z64_len = 12 + record_size;
    if (layout.eocd_offset < 20 + z64_len) return 0;
    start = layout.eocd_offset - 20 - z64_len;
  }
  if (start <= cd_end) return 0;
  const uint64_t len = src.Size() - start;
  if (cd_end + len > start) return 0;
  if (src.ReadString(cd_end, len) != src.ReadString(start, len)) return 0;
  return cd_end + len;
}

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

StampResult Stamp(const std::string& path, const StampOptions& options) {
  StampResult result;
  result.path = path;
  result.output = options.output.empty() ? path : options.output;
  result.dry_run = options.dry_run;
  const bool in_place = options.output.empty();

  CheckExtraName(options.meta_name);
  for (const auto& [name, data] : options.files) CheckExtraName(name);
  for (const std::string& name : options.remove) CheckExtraName(name);
  nlohmann::json meta;
  if (options.has_meta) {
    meta = nlohmann::json::parse(options.meta_json, nullptr, false);
    if (meta.is_discarded() || !meta.is_object()) {
      throw Error(ErrorKind::kUsage, "--meta: not a JSON object");
    }
  }

  // Refuse what is not a TorchScript archive before anything else, then a
  // read-only one, before any work.
  {
    std::unique_ptr<ByteSource> check = OpenFileSource(path);
    Archive::Open(std::move(check));
  }
  int wfd = -1;
  if (in_place && !options.dry_run) {
    wfd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    struct stat st {};
    if (wfd >= 0 && ::fstat(wfd, &st) == 0 && (st.st_mode & S_IWUSR) == 0) {
      // Honour a write-protected archive even where the permission check
      // would let us through (root in a container).
      ::close(wfd);
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      throw Error(ErrorKind::kIo, std::string("archive is read-only (mode ") + mode + "); use --output to write a new one");
    }
    if (wfd < 0) {
      int err = errno;
      if (err == EACCES || err == EROFS || err == EPERM) {
        throw Error(ErrorKind::kIo, "archive is not writable (" + std::string(std::strerror(err)) + "); use --output to write a new one");
      }
      throw Error(ErrorKind::kIo, std::string("cannot open: ") + std::strerror(err));
    }
  }
  struct FdCloser {
    int fd;
    ~FdCloser() {
      if (fd >= 0) ::close(fd);
    }
  } closer{wfd};

  std::unique_ptr<ByteSource> src = OpenFileSource(path);
  ZipLayout probe;
  try {
    probe = ReadZipLayout(*src);
  } catch (const Error&) {
  }
  if (wfd >= 0 && !probe.entries.empty()) {
    if (uint64_t end = InterruptedStampEnd(*src, probe)) {
      if (::ftruncate(wfd, static_cast<off_t>(end)) != 0) {
        throw Error(ErrorKind::kIo, std::string("cannot repair an interrupted stamp: ") + std::strerror(errno));
      }
      result.repaired = true;
      src = OpenFileSource(path);
    }
  }
  Archive archive = Archive::Open(std::move(src));
  const ZipLayout& layout = archive.layout();
  const std::string prefix = archive.root().empty() ? "" : archive.root() + "/";

  // What changes.
  std::map<std::string, std::string> writes;  // extra name -> content
  std::set<std::string> removes;
  for (const auto& [name, data] : options.files) writes[name] = data;
  bool touch_producer = options.auto_fields || options.has_meta || !options.set.empty();
  if (touch_producer) {
    nlohmann::json producer = nlohmann::json::object();
    if (!options.replace && archive.Has("extra/" + options.meta_name)) {
      std::string old = archive.Read("extra/" + options.meta_name);
      // Printing JSON recurses once per level: refuse absurd nesting.
      if (JsonTextDepth(old, 256) > 256) {
        throw Error(ErrorKind::kFormat, "extra/" + options.meta_name + " nests deeper than 256 levels; use --replace to overwrite it");
      }
      producer = nlohmann::json::parse(old, nullptr, false);
      if (producer.is_discarded() || !producer.is_object()) {
        throw Error(ErrorKind::kFormat, "extra/" + options.meta_name + " holds no JSON object; use --replace to overwrite it");
      }
    }
    if (options.auto_fields) Merge(producer, AutoProducerFields());
    if (options.has_meta) Merge(producer, meta);
    for (const auto& [key, value] : options.set) SetDotted(producer, key, value);
    result.producer = producer;
    writes[options.meta_name] = DumpJson(producer, 2) + "\n";
  }
  for (const std::string& name : options.remove) {
    if (writes.count(name)) throw Error(ErrorKind::kUsage, "extra/" + name + " is both written and removed");
    if (!archive.Has("extra/" + name)) throw Error(ErrorKind::kUsage, "no record extra/" + name + " to remove");
    removes.insert(name);
  }
  for (const auto& [name, data] : writes) {
    const ZipEntry* old = archive.Find("extra/" + name);
    result.actions.push_back({"extra/" + name, old ? "replace" : "add", old ? old->uncompressed_size : 0, data.size()});
  }
  for (const std::string& name : removes) {
    result.actions.push_back({"extra/" + name, "remove", archive.Find("extra/" + name)->uncompressed_size, 0});
  }
  if (options.dry_run) return result;

  // Kept records: everything except the extra/ records replaced or removed.
  std::vector<const ZipEntry*> kept;
  for (const ZipEntry& e : layout.entries) {
    std::string name = archive.RecordName(e);
    bool dropped = name.rfind("extra/", 0) == 0 && (writes.count(name.substr(6)) || removes.count(name.substr(6)));
    if (!dropped) kept.push_back(&e);
  }
  std::vector<NewRecord> records;
  for (const auto& [name, data] : writes) {
    records.push_back({prefix + "extra/" + name, data, Crc32(data.data(), data.size()), 0});
  }

  // The central directory keeps the kept records' own bytes.
  std::string old_cd = archive.source().ReadString(layout.central_directory_offset, layout.central_directory_size);
  auto build_tail = [&](uint64_t base, std::string& local, std::string& cd, uint64_t& cd_offset) {
    local.clear();
    cd.clear();
    for (NewRecord& r : records) AppendLocalRecord(local, base, r);
    for (const ZipEntry* e : kept) cd += old_cd.substr(e->central_offset - layout.central_directory_offset, e->central_size);
    for (const NewRecord& r : records) AppendCentralRecord(cd, r);
    cd_offset = base + local.size();
  };
  std::string local, cd;
  uint64_t cd_offset = 0;
  const uint64_t count = kept.size() + records.size();

  if (!in_place) {
    // A new file: the bytes before the old central directory, then the new tail.
    int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (rfd < 0) throw Error(ErrorKind::kIo, std::string("cannot open: ") + std::strerror(errno));
    FdCloser rclose{rfd};
    struct stat st {};
    ::fstat(rfd, &st);
    AtomicFile out(options.output, static_cast<int>(st.st_mode & 07777));
    uint64_t base = layout.central_directory_offset;
    build_tail(base, local, cd, cd_offset);
    std::string trailer = Trailer(count, cd_offset, cd.size(), layout.zip64, layout.comment);
    out.CopyFrom(rfd, 0, base);
    out.Write(local.data(), local.size());
    out.Write(cd.data(), cd.size());
    out.Write(trailer.data(), trailer.size());
    out.Commit();
    result.bytes_written = out.size();
    return result;
  }

  // In place. Old layout: [records][CD0][T0]. New: [records][CD0][T0][new
  // records][pad][CD1][T1], with T1 inside one page so its write is atomic.
  const uint64_t old_size = archive.source().Size();
  const std::string t0 = archive.source().ReadString(layout.trailer_offset, old_size - layout.trailer_offset);
  build_tail(old_size, local, cd, cd_offset);
  // Decide ZIP64 once, for the largest offset the page shift below can give.
  const bool zip64 = layout.zip64 || count >= 0xFFFF || cd.size() >= 0xFFFFFFFFu ||
                     cd_offset + kPage >= 0xFFFFFFFFu;
  std::string comment = layout.comment;
  std::string t1 = Trailer(count, cd_offset, cd.size(), zip64, comment);
  if (t1.size() < t0.size()) {  // T0' must lie inside T1: pad T1's comment
    comment.append(t0.size() - t1.size(), ' ');
    t1 = Trailer(count, cd_offset, cd.size(), zip64, comment);
  }
  uint64_t end = cd_offset + cd.size() + t1.size();
  if (t1.size() <= kPage && (end - t1.size()) / kPage != (end - 1) / kPage) {
    uint64_t shift = kPage - (end - t1.size()) % kPage;  // start T1 on the next page
    cd_offset += shift;
    end += shift;
    t1 = Trailer(count, cd_offset, cd.size(), zip64, comment);
  }
  try {
    // 1. A copy of the old trailer at the new end: readers still see CD0.
    PWriteAll(wfd, t0.data(), t0.size(), end - t0.size(), path);
    // 2. The new records and central directory, then make them durable.
    PWriteAll(wfd, local.data(), local.size(), old_size, path);
    PWriteAll(wfd, cd.data(), cd.size(), cd_offset, path);
    Sync(wfd, path);
    // 3. Commit: one write of the new trailer.
    PWriteAll(wfd, t1.data(), t1.size(), end - t1.size(), path);
    Sync(wfd, path);
  } catch (...) {
    // Best effort: drop everything after the old end; the old bytes were never touched.
    if (::ftruncate(wfd, static_cast<off_t>(old_size)) == 0) ::fdatasync(wfd);
    throw;
  }
  result.bytes_written = end - old_size;
  return result;
}

nlohmann::json ToJson(const StampResult& r) {
  nlohmann::json j;
  j["schema_version"] = kStampSchemaVersion;
  j["path"] = r.path;
  j["output"] = r.output;
  j["dry_run"] = r.dry_run;
  j["repaired"] = r.repaired;
  j["actions"] = nlohmann::json::array();
  for (const auto& a : r.actions) {
    j["actions"].push_back({{"record", a.record}, {"action", a.action}, {"old_size", a.old_size}, {"new_size", a.new_size}});
  }
  j["producer"] = r.producer.is_null() ? nlohmann::json(nullptr) : r.producer;
  j["bytes_written"] = r.bytes_written;
  MakeJsonUtf8(j);  // record names from the archive may not be UTF-8
  return j;
}

}  // namespace tsctl
