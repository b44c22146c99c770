// The storage classes PyTorch's pickler names for tensor data
// ("torch.FloatStorage"), and what each says about the elements it holds.
#pragma once

#include <cstdint>
#include <string>

namespace tsctl {

struct StorageDtype {
  const char* name;  // "float32"
  uint64_t size;     // bytes per element
};

// The dtype of a PyTorch storage class name ("FloatStorage"); null if unknown.
const StorageDtype* DtypeOfStorage(const std::string& storage_class);

}  // namespace tsctl
