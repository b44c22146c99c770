#include "npy.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "../zip/npz.h"
#include "tensors.h"
#include "tsctl/dtype.h"
#include "tsctl/error.h"

namespace tsctl {
namespace {

// The tensor type of NumPy's type string (little-endian, or '|' where byte
// order does not apply: tsctl/dtype.h's numpy column); Undefined if none, or
// if this LibTorch lacks it.
at::ScalarType NpyType(const std::string& descr) {
  for (const DtypeInfo& d : AllDtypes()) {
    if (*d.numpy && descr == d.numpy) return AtScalarType(&d);
  }
  return at::ScalarType::Undefined;
}

// What an .npy header's dict literal says about the array.
struct NpyHeader {
  at::ScalarType type;
  bool fortran = false;
  std::vector<int64_t> shape;
  size_t data = 0;  // where the elements start
};

// The shape tuple's text ("2, 3" or "4,") as sizes. Each dimension is a
// plain integer: a nested or otherwise odd shape (a header of 40 000 '(')
// is named, not handed to stoll.
std::vector<int64_t> NpyShape(const std::string& dims, const std::string& what) {
  std::vector<int64_t> shape;
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t comma = dims.find(',', pos);
    std::string part = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const size_t first = part.find_first_not_of(" "), last = part.find_last_not_of(" ");
    if (first != std::string::npos) {
      const std::string digits = part.substr(first, last - first + 1);
      if (digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) {
        BadValueFile(what, "the .npy header's shape is not a tuple of integers (it starts '(" + dims.substr(0, 32) + "')");
      }
      shape.push_back(std::stoll(digits));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return shape;
}

// The magic, the header's length (2 bytes in version 1, 4 in later ones)
// and the header's fields.
NpyHeader ReadNpyHeader(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) BadValueFile(what, "not an .npy array");
  size_t header_len, start;
  if (bytes[6] == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    start = 10;
  } else {
    if (bytes.size() < 12) BadValueFile(what, "a truncated .npy header");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(bytes[8 + i]);
    start = 12;
  }
  if (start + header_len > bytes.size()) BadValueFile(what, "a truncated .npy header");
  const std::string h = bytes.substr(start, header_len);
  auto field = [&](const std::string& key) {
    size_t k = h.find("'" + key + "'");
    if (k == std::string::npos) BadValueFile(what, "the .npy header has no '" + key + "'");
    size_t colon = h.find(':', k);
    return h.find_first_not_of(" ", colon + 1);
  };
  const size_t d = field("descr");
  const char quote = h[d];
  const std::string descr = h.substr(d + 1, h.find(quote, d + 1) - d - 1);
  const at::ScalarType type = NpyType(descr);
  if (type == at::ScalarType::Undefined) BadValueFile(what, "an array of dtype '" + descr + "', which tsctl cannot read");
  NpyHeader out{type};
  out.fortran = h.compare(field("fortran_order"), 4, "True") == 0;
  const size_t s = field("shape");
  out.shape = NpyShape(h.substr(s + 1, h.find(')', s) - s - 1), what);
  out.data = start + header_len;
  return out;
}

}  // namespace

[[noreturn]] void BadValueFile(const std::string& what, const std::string& why) {
  throw Error(ErrorKind::kFormat, what + ": " + why);
}

at::Tensor ReadNpy(const std::string& bytes, const std::string& what) {
  const NpyHeader h = ReadNpyHeader(bytes, what);
  int64_t numel = 1;
  for (int64_t x : h.shape) {
    if (x != 0 && numel > std::numeric_limits<int64_t>::max() / 16 / x) BadValueFile(what, "the .npy shape is too large");
    numel *= x;
  }
  const size_t need = static_cast<size_t>(numel) * c10::elementSize(h.type);
  if (bytes.size() - h.data < need) BadValueFile(what, "the array data is shorter than its shape says");
  // Fortran order is C order of the reversed shape, transposed back.
  std::vector<int64_t> layout = h.shape;
  if (h.fortran) std::reverse(layout.begin(), layout.end());
  at::Tensor out = at::empty(layout, at::TensorOptions().dtype(h.type));
  if (need) std::memcpy(out.data_ptr(), bytes.data() + h.data, need);
  if (h.fortran && h.shape.size() > 1) {
    std::vector<int64_t> perm;
    for (int64_t i = static_cast<int64_t>(h.shape.size()) - 1; i >= 0; --i) perm.push_back(i);
    out = out.permute(perm).contiguous();
  }
  return out;
}

std::vector<std::pair<std::string, c10::IValue>> NpzArrays(const Archive& archive, const std::string& path) {
  std::vector<std::pair<std::string, c10::IValue>> arrays;
  for (const std::string& name : archive.AllRecords()) {
    if (!EndsWith(name, ".npy")) continue;
    arrays.emplace_back(name.substr(0, name.size() - 4), ReadNpy(archive.Read(name, kMaxValueRecord), path + ":" + name));
  }
  if (arrays.empty()) BadValueFile(path, "an .npz archive without arrays");
  return arrays;
}

namespace {

// One tensor as an .npy file (quantized ones dequantized, on the CPU, C order).
std::string TensorNpy(at::Tensor t, const std::string& what) {
  if (t.is_quantized()) t = t.dequantize();
  t = t.to(torch::kCPU).contiguous();
  const DtypeInfo* dtype = DtypeByValue(static_cast<int>(t.scalar_type()));
  if (!dtype) throw Error(ErrorKind::kUsage, what + ": NumPy has no type for " + std::string(c10::toString(t.scalar_type())));
  return NpyFile(*dtype, t.sizes().vec(), {static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size()}, what);
}

// The tensors and scalars of `value`, in order (tuples, lists and dicts'
// values flattened depth first), each an .npy file: scalars as 0-d arrays.
void Flatten(const c10::IValue& value, const std::string& path, std::vector<std::string>& out) {
  if (value.isTensor()) {
    out.push_back(TensorNpy(value.toTensor(), path));
  } else if (value.isTuple()) {
    for (const c10::IValue& v : value.toTupleRef().elements()) Flatten(v, path, out);
  } else if (value.isList()) {
    for (const c10::IValue& v : value.toListRef()) Flatten(v, path, out);
  } else if (value.isGenericDict()) {
    for (const auto& item : value.toGenericDict()) Flatten(item.value(), path, out);
  } else if (value.isInt() || value.isDouble() || value.isBool()) {
    out.push_back(TensorNpy(value.isInt() ? torch::scalar_tensor(value.toInt(), torch::kInt64)
                            : value.isDouble() ? torch::scalar_tensor(value.toDouble(), torch::kFloat64)
                                               : torch::scalar_tensor(value.toBool(), torch::kBool),
                            path));
  } else if (!value.isNone()) {
    throw Error(ErrorKind::kUsage, path + ": NumPy's format holds tensors and numbers; the values include " +
                                       value.type()->annotation_str() + " (save them to a .pt file)");
  }
}

}  // namespace

std::string NpyBytes(const c10::IValue& value, const std::string& path) {
  if (IsNpzPath(path)) {
    std::vector<std::string> arrays;
    Flatten(value, path, arrays);
    std::vector<std::pair<std::string, std::string>> named;
    for (size_t i = 0; i < arrays.size(); ++i) named.emplace_back(NpzName(i), std::move(arrays[i]));
    return NpzFile(named);
  }
  if (!value.isTensor()) {
    throw Error(ErrorKind::kUsage, path + ": an .npy file holds one tensor; the values are " +
                                       value.type()->annotation_str() + " (save them to an .npz or .pt file)");
  }
  return TensorNpy(value.toTensor(), path);
}

}  // namespace tsctl
