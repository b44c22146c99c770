// Where other ZIP readers (Python's zipfile, libzip, Info-ZIP, a streaming
// reader, an older tsctl) could read another archive than LibTorch's miniz
// does. Each rule follows from how those readers work, not from names.
#include <algorithm>

#include "../text/lists.h"
#include "miniz_lookup.h"

namespace tsctl::miniz {
namespace {

constexpr size_t kMaxListed = 5;

std::string SingleQuoted(const std::string& s) { return "'" + s + "'"; }

std::string ListNames(std::vector<std::string> names) {
  for (std::string& n : names) n = SingleQuoted(n);
  return JoinSome(names, kMaxListed);
}

// Names that miniz cannot tell apart (ASCII case ignored), with the copy a
// lookup reaches: miniz's is not the last one Python's zipfile keeps.
void CaseGroups(const ZipLayout& layout, const std::vector<uint32_t>& sorted, std::vector<std::string>& out) {
  const auto& entries = layout.entries;
  size_t groups = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i + 1;
    while (j < sorted.size() && SameName(entries[sorted[i]].name, entries[sorted[j]].name)) ++j;
    if (j - i > 1 && ++groups <= kMaxListed) {
      std::vector<uint32_t> members(sorted.begin() + static_cast<long>(i), sorted.begin() + static_cast<long>(j));
      std::sort(members.begin(), members.end());
      std::vector<std::string> names;
      bool identical = true;
      for (uint32_t m : members) {
        names.push_back(entries[m].name);
        identical = identical && entries[m].name == entries[members[0]].name;
      }
      const uint32_t picked = *Locate(entries, sorted, entries[members[0]].name);
      const size_t nth = static_cast<size_t>(std::find(members.begin(), members.end(), picked) - members.begin()) + 1;
      out.push_back((identical ? std::to_string(names.size()) + " entries named " + SingleQuoted(names[0])
                               : "names equal but for case: " + ListNames(names)) +
                    " (LibTorch reads copy " + std::to_string(nth) + " of " + std::to_string(members.size()) +
                    ", other readers may take another)");
    }
    i = j;
  }
  if (groups > kMaxListed) out.push_back("... and " + std::to_string(groups - kMaxListed) + " more such names");
}

void OutsideRoot(const ZipLayout& layout, const std::string& root, std::vector<std::string>& out) {
  if (layout.entries.empty()) return;
  if (root.empty()) {
    // An AOTInductor package without a top folder (FindRoot) starts in data/.
    if (layout.entries.front().name.find('/') != std::string::npos) return;
    out.push_back("the first entry " + SingleQuoted(layout.entries.front().name) +
                  " is in no folder: LibTorch refuses the archive, other readers open it");
    return;
  }
  std::vector<std::string> outside;
  for (const ZipEntry& e : layout.entries) {
    if (!StartsWith(e.name, root + "/")) outside.push_back(e.name);
  }
  if (outside.empty()) return;
  out.push_back(std::to_string(outside.size()) + " entr" + (outside.size() == 1 ? "y" : "ies") +
                " outside the root folder " + SingleQuoted(root + "/") +
                " (the first entry's, which LibTorch reads; a reader that looks elsewhere could read these): " +
                ListNames(outside));
}

void EndRecords(const ZipLayout& layout, std::vector<std::string>& out) {
  for (uint64_t at : layout.other_end_records) {
    out.push_back("another end record at offset " + std::to_string(at) + " besides the last one at " +
                  std::to_string(layout.eocd_offset) + " (a reader that tries each, like libzip, can pick it)");
  }
  if (layout.comment_truncated) {
    out.push_back("the end record at offset " + std::to_string(layout.eocd_offset) +
                  " declares a comment that runs past the end of the file (miniz, zipfile and unzip take it; "
                  "libzip and strict readers look for another)");
  }
  if (layout.trailing_bytes > 0) {
    out.push_back(std::to_string(layout.trailing_bytes) + " bytes after the end record and its comment");
  }
  const uint64_t cd_end = layout.central_directory_offset + layout.central_directory_size;
  if (cd_end != layout.trailer_offset) {
    out.push_back("the central directory ends at offset " + std::to_string(cd_end) + " but the end records start at " +
                  std::to_string(layout.trailer_offset) +
                  " (Python's zipfile shifts every offset by the difference, miniz does not)");
  }
  // Bytes before the first record are no conflict by themselves: readers
  // that find the archive from its end agree on absolute offsets, and stamp
  // leaves replaced records anywhere, the first ones included.
}

void LocalHeaders(const ZipLayout& layout, std::vector<std::string>& out) {
  std::vector<std::string> differ;
  for (const ZipEntry& e : layout.entries) {
    if (!e.local_header_mismatch.empty()) {
      differ.push_back(e.name + ": " + e.local_header_mismatch);
    } else if (e.local_header_error.rfind("local header name differs", 0) == 0) {
      differ.push_back(e.name + ": " + e.local_header_error);
    }
  }
  if (differ.empty()) return;
  std::string s = "local headers disagree with the central directory (miniz reads the central directory, "
                  "streaming readers the local headers): ";
  out.push_back(s + JoinSome(differ, kMaxListed, "; "));
}

// PyTorchStreamReader::getAllRecords copies each name into a buffer of
// MZ_ZIP_MAX_ARCHIVE_FILENAME_SIZE (512) bytes: a longer name comes back cut
// to 511 bytes, so the record list LibTorch gives names another record, or
// none, while every other reader sees the whole name.
void LongNames(const ZipLayout& layout, std::vector<std::string>& out) {
  constexpr size_t kMinizNameBuffer = 512;
  std::vector<std::string> long_names;
  for (const ZipEntry& e : layout.entries) {
    if (e.name.size() >= kMinizNameBuffer) long_names.push_back(e.name.substr(0, 60) + "... (" + std::to_string(e.name.size()) + " bytes)");
  }
  if (long_names.empty()) return;
  out.push_back("record names of 512 bytes or more, which LibTorch's record list cuts to 511: " + ListNames(long_names));
}

}  // namespace

std::vector<std::string> Ambiguities(const ZipLayout& layout, const std::string& root,
                                     const std::vector<uint32_t>& sorted, bool rootless_ok) {
  std::vector<std::string> out;
  CaseGroups(layout, sorted, out);
  if (!(rootless_ok && root.empty())) OutsideRoot(layout, root, out);
  EndRecords(layout, out);
  LocalHeaders(layout, out);
  LongNames(layout, out);
  return out;
}

}  // namespace tsctl::miniz
