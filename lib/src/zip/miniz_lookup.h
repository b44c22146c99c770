// Record names looked up the way LibTorch does: PyTorchStreamReader calls
// miniz's mz_zip_reader_locate_file with flags 0, which binary-searches the
// central directory sorted by mz_zip_reader_sort_central_dir_offsets_by_filename
// (a heap sort, ASCII letters compared without case, a shorter name first
// when one is a prefix of the other). Among names equal but for case, which
// entry a lookup reaches depends on that sort and that search, so both are
// reproduced step for step. Private to lib/src (zip/ holds the semantics, archive/ asks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tsctl/zip.h"

namespace tsctl::miniz {

// miniz's MZ_TOLOWER: ASCII letters only.
inline unsigned char ToLower(unsigned char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

// True if `a` and `b` are equal for miniz (same length, ASCII case ignored).
bool SameName(std::string_view a, std::string_view b);

// True if `name` starts with `prefix` for miniz (ASCII case ignored).
bool StartsWith(std::string_view name, std::string_view prefix);

// The entry indices in the order mz_zip_reader_init leaves them.
std::vector<uint32_t> SortedIndex(const std::vector<ZipEntry>& entries);

// The entry mz_zip_reader_locate_file(name, flags 0) gives, or nullopt.
std::optional<uint32_t> Locate(const std::vector<ZipEntry>& entries, const std::vector<uint32_t>& sorted,
                               std::string_view name);

// Where ZIP readers could read `layout` differently from LibTorch, which
// reads it with root folder `root` through `sorted` (see Archive::Ambiguities).
// `rootless_ok`: no top folder is no ambiguity (a .pt2's loaders take it).
std::vector<std::string> Ambiguities(const ZipLayout& layout, const std::string& root,
                                     const std::vector<uint32_t>& sorted, bool rootless_ok = false);

}  // namespace tsctl::miniz
