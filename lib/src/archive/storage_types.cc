#include "tsctl/storage_types.h"

#include <map>

namespace tsctl {

const StorageDtype* DtypeOfStorage(const std::string& storage_class) {
  // Storage class names PyTorch's pickler writes ("torch.FloatStorage").
  static const std::map<std::string, StorageDtype> kMap = {
      {"FloatStorage", {"float32", 4}},   {"DoubleStorage", {"float64", 8}},
      {"HalfStorage", {"float16", 2}},    {"BFloat16Storage", {"bfloat16", 2}},
      {"LongStorage", {"int64", 8}},      {"IntStorage", {"int32", 4}},
      {"ShortStorage", {"int16", 2}},     {"CharStorage", {"int8", 1}},
      {"ByteStorage", {"uint8", 1}},      {"BoolStorage", {"bool", 1}},
      {"QInt8Storage", {"qint8", 1}},     {"QUInt8Storage", {"quint8", 1}},
      {"QInt32Storage", {"qint32", 4}},   {"QUInt4x2Storage", {"quint4x2", 1}},
      {"QUInt2x4Storage", {"quint2x4", 1}},
      {"ComplexFloatStorage", {"complex64", 8}}, {"ComplexDoubleStorage", {"complex128", 16}},
      {"ComplexHalfStorage", {"complex32", 4}},
  };
  auto it = kMap.find(storage_class);
  return it == kMap.end() ? nullptr : &it->second;
}

}  // namespace tsctl
