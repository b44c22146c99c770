#include "npy.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "../zip/npz.h"
#include "tensors.h"
#include "tsctl/dtype.h"
#include "tsctl/error.h"

namespace tsctl {

[[noreturn]] void BadValueFile(const std::string& what, const std::string& why) {
  throw Error(ErrorKind::kFormat, what + ": " + why);
}

at::Tensor ReadNpy(const std::string& bytes, const std::string& what) {
  const NpyArray h = ParseNpy(bytes, what);
  const at::ScalarType type = AtScalarType(h.dtype);
  if (type == at::ScalarType::Undefined) BadValueFile(what, std::string("an array of dtype ") + h.dtype->name + ", which this LibTorch lacks");
  const size_t need = static_cast<size_t>(h.bytes);
  // Fortran order is C order of the reversed shape, transposed back.
  std::vector<int64_t> layout = h.shape;
  if (h.fortran) std::reverse(layout.begin(), layout.end());
  at::Tensor out = at::empty(layout, at::TensorOptions().dtype(type));
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
