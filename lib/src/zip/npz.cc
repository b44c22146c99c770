// NumPy's .npy and .npz files (npz.h), by NumPy's format description
// (numpy/lib/format.py: version 1.0, header padded so the data starts on a
// 64-byte boundary) and numpy.savez (a ZIP of NAME.npy records). Written by
// hand: the format is a few lines, and NumPy is not a C++ library.
#include "npz.h"

#include "tsctl/error.h"
#include "tsctl/zip_writer.h"

namespace tsctl {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const std::string_view x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

}  // namespace

bool IsNpzPath(const std::string& path) { return EndsWith(path, ".npz"); }
bool IsNpyPath(const std::string& path) { return EndsWith(path, ".npy"); }
const char* NumpySuffix(const std::string& path) { return IsNpyPath(path) ? ".npy" : IsNpzPath(path) ? ".npz" : ""; }

std::string NpyFile(const DtypeInfo& dtype, const std::vector<int64_t>& shape, std::string_view data,
                    const std::string& what) {
  if (!*dtype.numpy) {
    throw Error(ErrorKind::kUsage, what + ": NumPy has no type for " + dtype.name + " (save it to a .pt file)");
  }
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.erase(dims.size() - 2);  // "(2, 3)"; a 1-D shape keeps its comma: "(4,)"
  else if (shape.size() == 1) dims.erase(dims.size() - 1);
  std::string header = std::string("{'descr': '") + dtype.numpy + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(data.data(), data.size());
  return out;
}

std::string NpzFile(const std::vector<std::pair<std::string, std::string>>& arrays) {
  ZipWriter w(0);
  for (const auto& [name, npy] : arrays) w.WriteRecord(name + ".npy", npy);
  const ZipTail tail = w.WriteEndOfFile(false, "");
  return tail.records + tail.central + tail.end;
}

std::string NpzName(size_t i) { return "arr_" + std::to_string(i); }

}  // namespace tsctl
