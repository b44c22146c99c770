// NumPy's .npy and .npz files (npz.h), by NumPy's format description
// (numpy/lib/format.py: version 1.0, header padded so the data starts on a
// 64-byte boundary) and numpy.savez (a ZIP of NAME.npy records). Written by
// hand: the format is a few lines, and NumPy is not a C++ library.
#include "npz.h"

#include "tsctl/error.h"
#include "tsctl/text_util.h"
#include "tsctl/zip_writer.h"

namespace tsctl {

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

namespace {

[[noreturn]] void BadNumpy(const std::string& what, const std::string& why) { throw Error(ErrorKind::kFormat, what + ": " + why); }

// The shape tuple's text ("2, 3" or "4,") as sizes. Each dimension is a
// plain integer: a nested or otherwise odd shape (a header of 40 000 '(')
// is named, not handed to stoll.
std::vector<int64_t> Shape(const std::string& dims, const std::string& what) {
  std::vector<int64_t> shape;
  size_t pos = 0;
  while (pos < dims.size()) {
    const size_t comma = dims.find(',', pos);
    const std::string part = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const size_t first = part.find_first_not_of(" "), last = part.find_last_not_of(" ");
    if (first != std::string::npos) {
      const std::string digits = part.substr(first, last - first + 1);
      if (digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) {
        BadNumpy(what, "the .npy header's shape is not a tuple of integers (it starts '(" + dims.substr(0, 32) + "')");
      }
      shape.push_back(std::stoll(digits));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return shape;
}

}  // namespace

NpyArray ParseNpy(std::string_view bytes, const std::string& what) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) BadNumpy(what, "not an .npy array");
  size_t header_len = 0, start = 10;
  if (bytes[6] == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  } else {
    if (bytes.size() < 12) BadNumpy(what, "a truncated .npy header");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(bytes[8 + i]);
    start = 12;
  }
  if (header_len > bytes.size() - start) BadNumpy(what, "a truncated .npy header");
  const std::string h(bytes.substr(start, header_len));
  auto field = [&](const std::string& key) {
    const size_t k = h.find("'" + key + "'");
    if (k == std::string::npos) BadNumpy(what, "the .npy header has no '" + key + "'");
    const size_t at = h.find_first_not_of(" ", h.find(':', k) + 1);
    if (at == std::string::npos) BadNumpy(what, "the .npy header's '" + key + "' has no value");
    return at;
  };
  const size_t d = field("descr");
  const std::string descr = h.substr(d + 1, h.find(h[d], d + 1) - d - 1);
  NpyArray out;
  for (const DtypeInfo& t : AllDtypes()) {
    if (*t.numpy && descr == t.numpy) out.dtype = &t;
  }
  if (!out.dtype) BadNumpy(what, "an array of dtype '" + descr + "', which tsctl cannot read");
  out.fortran = h.compare(field("fortran_order"), 4, "True") == 0;
  const size_t s = field("shape");
  out.shape = Shape(h.substr(s + 1, h.find(')', s) - s - 1), what);
  out.data = start + header_len;
  uint64_t numel = 1;
  for (int64_t x : out.shape) {
    if (x != 0 && numel > (uint64_t{1} << 60) / static_cast<uint64_t>(x)) BadNumpy(what, "the .npy shape is too large");
    numel *= static_cast<uint64_t>(x);
  }
  out.bytes = numel * out.dtype->size;
  if (bytes.size() - out.data < out.bytes) BadNumpy(what, "the array data is shorter than its shape says");
  return out;
}

}  // namespace tsctl
