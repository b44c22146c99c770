// The checks of `tsctl validate` that need no LibTorch: ZIP integrity and
// TorchScript structure. Reads only; never writes or extracts a file.
#include "validate_internal.h"

#include <algorithm>
#include <map>
#include <set>

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

std::string List(const std::vector<std::string>& names, size_t max = 5) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > max) s += ", ... (" + std::to_string(names.size()) + " in all)";
  return s;
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
                          : "damaged records: " + List(damaged)};
}

// zip.names and zip.duplicates: traversal, absolute paths, duplicates; the
// duplicated names are returned.
std::vector<std::string> NameChecks(const Entries& entries, std::vector<CheckResult>& out) {
  std::vector<std::string> escaping, duplicates;
  std::set<std::string> seen;
  for (const ZipEntry& e : entries) {
    const std::string& n = e.name;
    bool bad = n.empty() || n[0] == '/' || n.find('\\') != std::string::npos || n == ".." ||
               n.rfind("../", 0) == 0 || n.find("/../") != std::string::npos ||
               (n.size() >= 3 && n.compare(n.size() - 3, 3, "/..") == 0) ||
               (n.size() > 1 && n[1] == ':');
    if (bad) escaping.push_back(n);
    if (!seen.insert(n).second) duplicates.push_back(n);
  }
  out.push_back(
      {check::kZipNames, escaping.empty() ? CheckStatus::kPass : CheckStatus::kFail,
       escaping.empty() ? "no record name escapes the archive" : "record names escape the archive: " + List(escaping)});
  out.push_back({check::kZipDuplicates, duplicates.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 duplicates.empty() ? "no duplicate record names" : "duplicate record names: " + List(duplicates)});
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
          overlaps.empty() ? "no records overlap" : "overlapping records: " + List(overlaps)};
}

// zip.compression and zip.bomb: encryption, unknown methods, bombs; the
// names of the bombs are returned (zip.crc does not inflate them).
std::set<std::string> CompressionChecks(const Entries& entries, uint64_t max_record_bytes, std::vector<CheckResult>& out) {
  std::vector<std::string> odd, bombs;
  std::set<std::string> bomb_names;
  for (const ZipEntry& e : entries) {
    if (e.encrypted()) odd.push_back(e.name + " (encrypted)");
    else if (e.method != kZipStored && e.method != kZipDeflated) odd.push_back(e.name + " (method " + std::to_string(e.method) + ")");
    double ratio = e.compressed_size ? static_cast<double>(e.uncompressed_size) / static_cast<double>(e.compressed_size) : 0;
    if (e.uncompressed_size > max_record_bytes ||
        (e.uncompressed_size >= kBombMinBytes && (ratio > kBombRatio || e.compressed_size == 0))) {
      bombs.push_back(e.name + " (" + std::to_string(e.uncompressed_size) + " bytes from " + std::to_string(e.compressed_size) + ")");
      bomb_names.insert(e.name);
    }
  }
  out.push_back({check::kZipCompression, odd.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 odd.empty() ? "records are stored or deflated, none encrypted" : "unexpected records: " + List(odd)});
  out.push_back({check::kZipBomb, bombs.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 bombs.empty() ? "no record with an absurd size or compression ratio" : "zip bomb: " + List(bombs)});
  return bomb_names;
}

// zip.crc and zip.sizes: streams every record (bombs and records not to
// read skipped, sizes capped).
void CrcChecks(const Archive& a, const std::vector<bool>& not_read, const std::set<std::string>& bomb_names,
               std::vector<CheckResult>& out) {
  const Entries& entries = a.layout().entries;
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
  out.push_back({check::kZipCrc, crc_bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 crc_bad.empty()
                     ? Plural(checked, "record") + " read, all CRC-32 match" +
                           (skipped ? " (" + Plural(skipped, "duplicate or overlapping record") + " not read)" : "")
                     : "CRC-32 mismatch (corrupt data): " + List(crc_bad)});
  out.push_back(
      {check::kZipSizes, size_bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
       size_bad.empty() ? "declared sizes match the data" : "declared sizes differ from the data: " + List(size_bad)});
}

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

// data.pkl and constants.pkl, those present, parsed for ts.globals and
// ts.storage; storages they name that are missing go to `missing`, parse
// errors to `pickle_errors`.
std::vector<ParsedPickle> ParseArchivePickles(const Archive& a, std::vector<std::string>& missing,
                                              std::vector<std::string>& pickle_errors) {
  std::vector<ParsedPickle> parsed;
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
  return parsed;
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
                                  " not 64-byte aligned (slower loads, no mmap): " + List(unaligned)};
}

}  // namespace

void CheckZip(const Archive& a, const ValidateOptions& options, std::vector<CheckResult>& out, bool read_records) {
  // The ZIP checks look at every stored entry (each copy of a duplicated name,
  // names as stored), so they read the raw entries, not Archive's queries.
  const Entries& entries = a.layout().entries;
  out.push_back(HeaderCheck(entries));
  const std::vector<std::string> duplicates = NameChecks(entries, out);
  out.push_back(AmbiguityCheck(a));
  out.push_back(OverlapCheck(a));
  const std::set<std::string> bomb_names = CompressionChecks(entries, options.max_record_bytes, out);
  if (read_records) CrcChecks(a, NotToRead(entries, duplicates), bomb_names, out);
}

void CheckStructure(const Archive& a, std::vector<CheckResult>& out) {
  const bool legacy = a.kind() == ArchiveKind::kTorchScriptLegacy;
  out.push_back({check::kTsKind, CheckStatus::kPass,
                 legacy ? "TorchScript archive (legacy model.json layout)" : "TorchScript archive"});
  out.push_back({check::kTsLayout, legacy ? CheckStatus::kWarn : CheckStatus::kPass,
                 legacy ? "legacy PyTorch 1.0 layout (model.json): newer LibTorch builds may refuse it; re-save it"
                        : std::string("root folder '") + a.root() + "'" +
                              (a.Has("bytecode.pkl") ? ", mobile bytecode.pkl present" : "")});

  // Required records, and the storages data.pkl refers to.
  std::vector<std::string> missing = MissingRequiredRecords(a, legacy);
  std::vector<std::string> pickle_errors;
  std::vector<ParsedPickle> parsed;
  if (!legacy) parsed = ParseArchivePickles(a, missing, pickle_errors);
  if (!legacy && !a.HasRecordsUnder("code/")) missing.push_back("code/");
  out.push_back({check::kTsRecords, missing.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 missing.empty() ? "required records and every referenced storage present"
                                 : "missing records: " + List(missing)});
  if (!legacy) {
    out.push_back({check::kTsPickle, pickle_errors.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                   pickle_errors.empty() ? "data.pkl and constants.pkl are well-formed" : List(pickle_errors)});
    CheckPickleContents(a, parsed, out);
  }
  out.push_back(VersionCheck(a));
  out.push_back(AlignmentCheck(a));
}

}  // namespace tsctl
