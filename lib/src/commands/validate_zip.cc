// The checks of `tsctl validate` that need no LibTorch: ZIP integrity and
// TorchScript structure. Reads only; never writes or extracts a file.
#include "validate_internal.h"

#include <algorithm>
#include <map>
#include <set>

#include "check_context.h"
#include "format_support.h"
#include "tsctl/error.h"
#include "tsctl/pickle.h"
#include "tsctl/stamp.h"

namespace tsctl {
namespace {

constexpr double kBombRatio = 200;             // deflate tops out near 1032
constexpr uint64_t kBombMinBytes = 16 << 20;   // small records may compress well

std::string Plural(size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// Bytes after the data: a data descriptor when flag bit 3 is set.
uint64_t DescriptorSize(const ByteSource& src, const ZipEntry& e) {
  if (!e.has_data_descriptor()) return 0;
  if (e.data_end() + 4 > src.Size()) return 12;
  std::string sig = src.ReadString(e.data_end(), 4);
  bool has_sig = sig == std::string("PK\x07\x08", 4);
  bool zip64 = e.compressed_size >= 0xFFFFFFFFu || e.uncompressed_size >= 0xFFFFFFFFu;
  return (has_sig ? 4 : 0) + 4 + (zip64 ? 16 : 8);
}

// zip.ambiguous: where another ZIP reader could see another archive than
// the one LibTorch loads (Archive::Ambiguities), and a stamp journal that a
// consistent archive carries (stamp leaves it alone: reported, not trusted).
CheckResult AmbiguityCheck(const Archive& a) {
  const std::vector<std::string>& found = a.Ambiguities();
  if (!found.empty()) {
    std::string s;
    for (size_t i = 0; i < found.size(); ++i) s += (i ? "; " : "") + found[i];
    return {check::kZipAmbiguous, CheckStatus::kFail,
            "readers can see another archive than the one LibTorch loads: " + s};
  }
  if (!a.LayoutNotes().empty()) return {check::kZipAmbiguous, CheckStatus::kWarn, a.LayoutNotes().front()};
  const std::optional<std::string> tail = DescribeStampJournal(a);
  if (tail) return {check::kZipAmbiguous, CheckStatus::kWarn, *tail};
  return {check::kZipAmbiguous, CheckStatus::kPass, "every ZIP reader sees the records LibTorch loads"};
}

using Entries = std::vector<ZipEntry>;

// zip.structure: local headers and extents.
CheckResult HeaderCheck(const Entries& entries) {
  std::vector<std::string> damaged;
  for (const ZipEntry& e : entries) {
    if (!e.local_header_error.empty()) damaged.push_back(e.name + " (" + e.local_header_error + ")");
  }
  return {check::kZipStructure, damaged.empty() ? CheckStatus::kPass : CheckStatus::kFail,
          damaged.empty() ? Plural(entries.size(), "record") + ", central directory and local headers sound"
                          : "damaged records: " + JoinSome(damaged, 5)};
}

// zip.names: traversal and absolute paths.
CheckResult EscapingNamesCheck(const Entries& entries) {
  std::vector<std::string> escaping;
  for (const ZipEntry& e : entries) {
    const std::string& n = e.name;
    bool bad = n.empty() || n[0] == '/' || n.find('\\') != std::string::npos || n == ".." ||
               n.rfind("../", 0) == 0 || n.find("/../") != std::string::npos ||
               (n.size() >= 3 && n.compare(n.size() - 3, 3, "/..") == 0) ||
               (n.size() > 1 && n[1] == ':');
    if (bad) escaping.push_back(n);
  }
  return {check::kZipNames, escaping.empty() ? CheckStatus::kPass : CheckStatus::kFail,
          escaping.empty() ? "no record name escapes the archive" : "record names escape the archive: " + JoinSome(escaping, 5)};
}

// Names stored more than once (each further copy listed).
std::vector<std::string> DuplicateNames(const Entries& entries) {
  std::vector<std::string> duplicates;
  std::set<std::string> seen;
  for (const ZipEntry& e : entries) {
    if (!seen.insert(e.name).second) duplicates.push_back(e.name);
  }
  return duplicates;
}

struct Extent {
  uint64_t begin, end;
  std::string name;
  size_t entry;  // index into entries; entries.size() for the central directory
};

// Records whose data shares bytes with another record's, and duplicated
// names: failed by zip.overlap and zip.duplicates and not inflated again by
// zip.crc (5 000 copies of one deflate bomb would take minutes). Indexed by
// entry.
std::vector<bool> NotToRead(const Entries& entries, const std::vector<std::string>& duplicates) {
  std::vector<bool> not_read(entries.size() + 1, false);
  std::vector<Extent> data;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ZipEntry& e = entries[i];
    if (e.local_header_error.empty() && e.compressed_size > 0) data.push_back({e.data_offset, e.data_end(), {}, i});
  }
  std::sort(data.begin(), data.end(), [](const Extent& x, const Extent& y) { return x.begin < y.begin; });
  uint64_t reach = 0;  // furthest data end so far, and whose it is
  size_t reach_entry = entries.size();
  for (const Extent& x : data) {
    if (x.begin < reach) {
      not_read[x.entry] = true;
      not_read[reach_entry] = true;
    }
    if (x.end > reach) {
      reach = x.end;
      reach_entry = x.entry;
    }
  }
  std::set<std::string> dup_names(duplicates.begin(), duplicates.end());
  for (size_t i = 0; i < entries.size(); ++i) {
    if (dup_names.count(entries[i].name)) not_read[i] = true;
  }
  return not_read;
}

// zip.overlap: each record's bytes, and the central directory, apart.
CheckResult OverlapCheck(const Archive& a) {
  const Entries& entries = a.layout().entries;
  std::vector<Extent> extents;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ZipEntry& e = entries[i];
    if (!e.local_header_error.empty()) continue;
    extents.push_back({e.local_header_offset, e.data_end() + DescriptorSize(a.source(), e), e.name, i});
  }
  const ZipLayout& layout = a.layout();
  extents.push_back({layout.central_directory_offset, layout.central_directory_offset + layout.central_directory_size,
                     "(central directory)", entries.size()});
  std::sort(extents.begin(), extents.end(), [](const Extent& x, const Extent& y) { return x.begin < y.begin; });
  std::vector<std::string> overlaps;
  for (size_t i = 1; i < extents.size(); ++i) {
    if (extents[i].begin < extents[i - 1].end) overlaps.push_back(extents[i - 1].name + " / " + extents[i].name);
  }
  return {check::kZipOverlap, overlaps.empty() ? CheckStatus::kPass : CheckStatus::kFail,
          overlaps.empty() ? "no records overlap" : "overlapping records: " + JoinSome(overlaps, 5)};
}

// zip.compression: encryption and unknown methods.
CheckResult CompressionCheck(const Entries& entries) {
  std::vector<std::string> odd;
  for (const ZipEntry& e : entries) {
    if (e.encrypted()) odd.push_back(e.name + " (encrypted)");
    else if (e.method != kZipStored && e.method != kZipDeflated) odd.push_back(e.name + " (method " + std::to_string(e.method) + ")");
  }
  return {check::kZipCompression, odd.empty() ? CheckStatus::kPass : CheckStatus::kFail,
          odd.empty() ? "records are stored or deflated, none encrypted" : "unexpected records: " + JoinSome(odd, 5)};
}

// zip.bomb's records: an absurd size or compression ratio (zip.crc does
// not inflate them).
std::vector<const ZipEntry*> Bombs(const Entries& entries, uint64_t max_record_bytes) {
  std::vector<const ZipEntry*> bombs;
  for (const ZipEntry& e : entries) {
    double ratio = e.compressed_size ? static_cast<double>(e.uncompressed_size) / static_cast<double>(e.compressed_size) : 0;
    if (e.uncompressed_size > max_record_bytes ||
        (e.uncompressed_size >= kBombMinBytes && (ratio > kBombRatio || e.compressed_size == 0))) {
      bombs.push_back(&e);
    }
  }
  return bombs;
}

// zip.crc and zip.sizes, from one pass that streams every record (bombs,
// duplicates and overlapping records skipped, sizes capped): the first of
// the two that runs reads, the other reads its result.
struct RecordReads {
  explicit RecordReads(CheckContext& c) {
    const Archive& a = *c.archive;
    const Entries& entries = a.layout().entries;
    const std::vector<bool> not_read = NotToRead(entries, DuplicateNames(entries));
    std::set<std::string> bomb_names;
    for (const ZipEntry* e : Bombs(entries, c.options.max_record_bytes)) bomb_names.insert(e->name);
    std::vector<std::string> crc_bad, size_bad;
    size_t checked = 0, skipped = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      const ZipEntry& e = entries[i];
      if (!e.local_header_error.empty() || e.encrypted() || bomb_names.count(e.name)) continue;
      if (not_read[i]) {
        ++skipped;
        continue;
      }
      if (e.method != kZipStored && e.method != kZipDeflated) continue;
      if (e.method == kZipStored && e.compressed_size != e.uncompressed_size) {
        size_bad.push_back(e.name);
        continue;
      }
      try {
        StreamResult r = StreamEntry(a.source(), e, e.uncompressed_size);
        if (r.produced != e.uncompressed_size) size_bad.push_back(e.name);
        else if (r.crc32 != e.crc32) crc_bad.push_back(e.name);
        ++checked;
      } catch (const Error& err) {
        (std::string(err.what()).find("limit") != std::string::npos ? size_bad : crc_bad).push_back(e.name);
      }
    }
    crc = {check::kZipCrc, crc_bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
           crc_bad.empty() ? Plural(checked, "record") + " read, all CRC-32 match" +
                                 (skipped ? " (" + Plural(skipped, "duplicate or overlapping record") + " not read)" : "")
                           : "CRC-32 mismatch (corrupt data): " + JoinSome(crc_bad, 5)};
    sizes = {check::kZipSizes, size_bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
             size_bad.empty() ? "declared sizes match the data" : "declared sizes differ from the data: " + JoinSome(size_bad, 5)};
  }
  CheckResult crc, sizes;
};

// The records an archive of its layout needs that it lacks (code/ aside).
std::vector<std::string> MissingRequiredRecords(const Archive& a, bool legacy) {
  std::vector<std::string> missing;
  if (legacy) {
    for (const char* r : {"model.json", "version"}) if (!a.Has(r)) missing.push_back(r);
  } else {
    for (const char* r : {"data.pkl", "constants.pkl"}) if (!a.Has(r)) missing.push_back(r);
    if (!a.Has("version") && !a.Has(".data/version")) missing.push_back("version");
  }
  return missing;
}

// Every persistent storage id in `root`, the value of record `pkl`, must
// name a record: appends to `missing` each one that does not.
void FindMissingStorages(const Archive& a, const char* pkl, const PyRef& root, std::vector<std::string>& missing) {
  std::vector<PyRef> stack = {root};
  std::set<const PyValue*> visited;
  const std::string dir = std::string(pkl) == "data.pkl" ? "data/" : "constants/";
  while (!stack.empty()) {
    PyRef cur = stack.back();
    stack.pop_back();
    if (!cur || !visited.insert(cur.get()).second) continue;
    if (cur->kind == PyKind::kPersistentId && !cur->items.empty() && cur->items[0]->kind == PyKind::kTuple) {
      const auto& id = cur->items[0]->items;
      if (id.size() >= 3 && id[2]->kind == PyKind::kString) {
        const std::string& key = id[2]->str;
        bool found = a.Has(dir + key) || a.Has("data/" + key) || a.Has(key) || a.Has("constants/" + key + ".storage");
        if (!found) missing.push_back(dir + key + " (storage of " + pkl + ")");
      }
    }
    for (const auto& i : cur->items) stack.push_back(i);
    for (const auto& [k, val] : cur->entries) stack.push_back(val);
    if (cur->state) stack.push_back(cur->state);
  }
}

// ts.version: the format version, against the range LibTorch reads.
CheckResult VersionCheck(const Archive& a) {
  std::string record = a.Has(".data/version") ? ".data/version" : "version";
  try {
    int64_t v = std::stoll(a.Read(record, 64));
    FormatVersionRange supported = SupportedFormatVersions();
    bool ok = v >= supported.min && v <= supported.max;
    // The table's release is not named: the same archive gives the same report in every build.
    std::string reader = supported.from_plugin ? "this LibTorch reads" : "LibTorch reads";
    std::string range = std::to_string(supported.min) + " to " + std::to_string(supported.max) +
                        (supported.from_plugin ? "" : ", by tsctl's table");
    return {check::kTsVersion, ok ? CheckStatus::kPass : CheckStatus::kFail,
            "format version " + std::to_string(v) +
                (ok ? " (" + reader + " " + range + ")" : " is outside the range " + reader + " (" + range + ")")};
  } catch (const std::exception& e) {
    return {check::kTsVersion, CheckStatus::kFail, "cannot read the " + record + " record: " + e.what()};
  }
}

// ts.alignment: tensor data at 64-byte offsets. Every stored copy's offset,
// so the raw entries.
CheckResult AlignmentCheck(const Archive& a) {
  std::vector<std::string> unaligned;
  for (const ZipEntry& e : a.layout().entries) {
    std::string n = a.RecordName(e);
    if ((n.rfind("data/", 0) == 0 || n.rfind("constants/", 0) == 0) && e.local_header_error.empty() && e.data_offset % 64 != 0) {
      unaligned.push_back(n);
    }
  }
  return {check::kTsAlignment, unaligned.empty() ? CheckStatus::kPass : CheckStatus::kWarn,
          unaligned.empty() ? "tensor data records start on 64-byte boundaries"
                            : Plural(unaligned.size(), "tensor data record") +
                                  " not 64-byte aligned (slower loads, no mmap): " + JoinSome(unaligned, 5)};
}

// The ZIP rows: every stored entry (each copy of a duplicated name, names
// as stored), so the raw entries, not Archive's queries.
const Entries& EntriesOf(const CheckContext& c) { return c.archive->layout().entries; }

void CheckZipStructure(CheckContext& c) { c.Add(HeaderCheck(EntriesOf(c))); }
void CheckZipNames(CheckContext& c) { c.Add(EscapingNamesCheck(EntriesOf(c))); }
void CheckZipDuplicates(CheckContext& c) {
  const std::vector<std::string> duplicates = DuplicateNames(EntriesOf(c));
  c.Add({check::kZipDuplicates, duplicates.empty() ? CheckStatus::kPass : CheckStatus::kFail,
         duplicates.empty() ? "no duplicate record names" : "duplicate record names: " + JoinSome(duplicates, 5)});
}
void CheckZipAmbiguous(CheckContext& c) { c.Add(AmbiguityCheck(*c.archive)); }
void CheckZipOverlap(CheckContext& c) { c.Add(OverlapCheck(*c.archive)); }
void CheckZipCompression(CheckContext& c) { c.Add(CompressionCheck(EntriesOf(c))); }
void CheckZipBomb(CheckContext& c) {
  std::vector<std::string> bombs;
  for (const ZipEntry* e : Bombs(EntriesOf(c), c.options.max_record_bytes)) {
    bombs.push_back(e->name + " (" + std::to_string(e->uncompressed_size) + " bytes from " + std::to_string(e->compressed_size) + ")");
  }
  c.Add({check::kZipBomb, bombs.empty() ? CheckStatus::kPass : CheckStatus::kFail,
         bombs.empty() ? "no record with an absurd size or compression ratio" : "zip bomb: " + JoinSome(bombs, 5)});
}
void CheckZipCrc(CheckContext& c) { c.Add(c.Facts<RecordReads>().crc); }
void CheckZipSizes(CheckContext& c) { c.Add(c.Facts<RecordReads>().sizes); }

}  // namespace

const std::vector<CheckRow>& ZipCheckRows() {
  static const std::vector<CheckRow> kRows = {
      {.id = check::kZipStructure, .check = CheckZipStructure},
      {.id = check::kZipNames, .check = CheckZipNames},
      {.id = check::kZipDuplicates, .check = CheckZipDuplicates},
      {.id = check::kZipAmbiguous, .check = CheckZipAmbiguous},
      {.id = check::kZipOverlap, .check = CheckZipOverlap},
      {.id = check::kZipCompression, .check = CheckZipCompression},
      {.id = check::kZipBomb, .check = CheckZipBomb},
      {.id = check::kZipCrc, .check = CheckZipCrc},
      {.id = check::kZipSizes, .check = CheckZipSizes},
  };
  return kRows;
}

ArchivePickles::ArchivePickles(CheckContext& c) : legacy(c.archive->kind() == ArchiveKind::kTorchScriptLegacy) {
  const Archive& a = *c.archive;
  missing = MissingRequiredRecords(a, legacy);
  if (legacy) return;
  // data.pkl and constants.pkl, those present; storages they name that are
  // missing go to `missing`.
  for (const char* pkl : {"data.pkl", "constants.pkl"}) {
    if (!a.Has(pkl)) continue;
    ParsedPickle p{pkl, nullptr, {}};
    try {
      p.root = ParsePickle(a.Read(pkl), {}, &p.facts);
      FindMissingStorages(a, pkl, p.root, missing);
    } catch (const Error& e) {
      pickle_errors.push_back(std::string(pkl) + ": " + e.what());
    }
    // Globals seen before a parse failed still count for ts.globals.
    parsed.push_back(std::move(p));
  }
  if (!a.HasRecordsUnder("code/")) missing.push_back("code/");
}

void CheckTsRecords(CheckContext& c) {
  const std::vector<std::string>& missing = c.Facts<ArchivePickles>().missing;
  c.Add({check::kTsRecords, missing.empty() ? CheckStatus::kPass : CheckStatus::kFail,
         missing.empty() ? "required records and every referenced storage present" : "missing records: " + JoinSome(missing, 5)});
}

void CheckTsPickle(CheckContext& c) {
  const ArchivePickles& p = c.Facts<ArchivePickles>();
  if (p.legacy) return;
  c.Add({check::kTsPickle, p.pickle_errors.empty() ? CheckStatus::kPass : CheckStatus::kFail,
         p.pickle_errors.empty() ? "data.pkl and constants.pkl are well-formed" : JoinSome(p.pickle_errors, 5)});
}

void CheckTsVersion(CheckContext& c) { c.Add(VersionCheck(*c.archive)); }
void CheckTsAlignment(CheckContext& c) { c.Add(AlignmentCheck(*c.archive)); }

}  // namespace tsctl
