// A step-for-step rendering of miniz 2.x's name index (miniz.c:
// mz_zip_reader_filename_less, mz_zip_reader_sort_central_dir_offsets_by_filename,
// mz_zip_filename_compare, mz_zip_locate_file_binary_search).
#include "miniz_lookup.h"

#include <algorithm>
#include <utility>

namespace tsctl::miniz {
namespace {

// mz_zip_reader_filename_less.
bool Less(std::string_view l, std::string_view r) {
  const size_t n = std::min(l.size(), r.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char a = ToLower(static_cast<unsigned char>(l[i]));
    const unsigned char b = ToLower(static_cast<unsigned char>(r[i]));
    if (a != b) return a < b;
  }
  return l.size() < r.size();
}

// mz_zip_filename_compare: <0, 0, >0.
int Compare(std::string_view l, std::string_view r) {
  const size_t n = std::min(l.size(), r.size());
  for (size_t i = 0; i < n; ++i) {
    const int a = ToLower(static_cast<unsigned char>(l[i]));
    const int b = ToLower(static_cast<unsigned char>(r[i]));
    if (a != b) return a - b;
  }
  return static_cast<int>(l.size()) - static_cast<int>(r.size());
}

}  // namespace

bool SameName(std::string_view a, std::string_view b) { return a.size() == b.size() && Compare(a, b) == 0; }

bool StartsWith(std::string_view name, std::string_view prefix) {
  return name.size() >= prefix.size() && SameName(name.substr(0, prefix.size()), prefix);
}

std::vector<uint32_t> SortedIndex(const std::vector<ZipEntry>& entries) {
  const uint64_t size = entries.size();
  std::vector<uint32_t> idx(entries.size());
  for (uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
  if (size <= 1) return idx;
  auto less = [&](uint32_t l, uint32_t r) { return Less(entries[l].name, entries[r].name); };
  // Sift `root` down within [0, end), exactly as miniz's two loops do.
  auto sift = [&](uint64_t root, uint64_t end) {
    for (;;) {
      uint64_t child = (root << 1U) + 1U;
      if (child >= end) break;
      child += ((child + 1U) < end) && less(idx[child], idx[child + 1U]);
      if (!less(idx[root], idx[child])) break;
      std::swap(idx[root], idx[child]);
      root = child;
    }
  };
  for (uint64_t start = (size - 2U) >> 1U;; --start) {
    sift(start, size);
    if (start == 0) break;
  }
  for (uint64_t end = size - 1; end > 0; --end) {
    std::swap(idx[end], idx[0]);
    sift(0, end);
  }
  return idx;
}

std::optional<uint32_t> Locate(const std::vector<ZipEntry>& entries, const std::vector<uint32_t>& sorted,
                               std::string_view name) {
  // strlen(): a lookup name ends at its first NUL.
  name = name.substr(0, name.find('\0'));
  int64_t l = 0, h = static_cast<int64_t>(sorted.size()) - 1;
  while (l <= h) {
    const int64_t m = l + ((h - l) >> 1);
    const uint32_t file_index = sorted[static_cast<size_t>(m)];
    const int comp = Compare(entries[file_index].name, name);
    if (comp == 0) return file_index;
    if (comp < 0) {
      l = m + 1;
    } else {
      h = m - 1;
    }
  }
  return std::nullopt;
}

}  // namespace tsctl::miniz
