// NumPy's file formats, written without NumPy or torch: an .npy file (one
// array: the magic, a header dict literal padded to 64 bytes, the elements
// in C order, little-endian) and an .npz file (a ZIP of .npy files, what
// numpy.savez writes and numpy.load reads: positional arrays are named
// arr_0, arr_1, ...). What --save-inputs and --save-outputs write when the
// file's name ends in .npy or .npz, for every format (docs/manual/validate.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tsctl/dtype.h"

namespace tsctl {

// True if `path` ends in .npz (or .npy).
bool IsNpzPath(const std::string& path);
bool IsNpyPath(const std::string& path);
// ".npy" or ".npz" where `path` ends so, else "": the suffix a temporary
// file gets for a child that writes the format a file's name asks for.
const char* NumpySuffix(const std::string& path);

// An .npy file of `dtype` (one with a NumPy type: DtypeInfo::numpy) and
// `shape` holding `data` (C order; its size must be the elements' bytes).
// Throws tsctl::Error (kUsage) naming `what` for a dtype NumPy lacks.
std::string NpyFile(const DtypeInfo& dtype, const std::vector<int64_t>& shape, std::string_view data,
                    const std::string& what);

// An .npz file of the named .npy files ("arr_0" -> "arr_0.npy").
std::string NpzFile(const std::vector<std::pair<std::string, std::string>>& arrays);

// The name numpy.savez gives the i-th positional array.
std::string NpzName(size_t i);

// An .npy array as read: its dtype (tsctl/dtype.h's numpy column), shape,
// order, and where its elements start in the file's bytes.
struct NpyArray {
  const DtypeInfo* dtype = nullptr;
  std::vector<int64_t> shape;
  bool fortran = false;  // the elements are in Fortran order: C order of the reversed shape
  size_t data = 0;       // offset of the elements
  uint64_t bytes = 0;    // their size (numel x element size), checked against the file
};

// Reads an .npy file's header (versions 1 to 3) and checks that its data
// holds the elements the shape says. Throws tsctl::Error (kFormat, "WHAT:
// why") for anything else: no magic, a truncated header, a dtype tsctl
// does not know, a shape that is no tuple of integers or too large.
NpyArray ParseNpy(std::string_view bytes, const std::string& what);

}  // namespace tsctl
