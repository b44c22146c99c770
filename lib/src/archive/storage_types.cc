#include "storage_types.h"

#include <map>

#include "tsctl/dtype.h"

namespace tsctl {

const StorageDtype* DtypeOfStorage(const std::string& storage_class) {
  // The storage class TorchScript's pickler writes for a tensor is c10's
  // name of its dtype and "Storage" ("FloatStorage", "UInt16Storage",
  // "Float8_e4m3fnStorage": pickler.cpp, toString(scalar_type)).
  static const std::map<std::string, StorageDtype> kMap = [] {
    std::map<std::string, StorageDtype> m;
    for (const DtypeInfo& d : AllDtypes()) m.emplace(std::string(d.c10) + "Storage", StorageDtype{d.name, d.size});
    return m;
  }();
  auto it = kMap.find(storage_class);
  return it == kMap.end() ? nullptr : &it->second;
}

}  // namespace tsctl
