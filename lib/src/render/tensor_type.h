// A tensor's dtype and shape, read back from the strings the reports carry,
// for the structured `dtype` and `shape` fields the JSON gives beside them.
// Not a public interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tsctl {

struct TensorType {
  std::string dtype;  // "float32", as InputSpec and inspect name dtypes
  std::vector<int64_t> shape;
};

// LibTorch's description of a tensor ("Float[1, 10]", "Long[]": the scalar
// type's name and the sizes, as validate's outputs show it), or an input spec
// ("1x3x224x224:float32", "scalar:int64", fills and channels_last allowed;
// "2x3" is float32; a bare "3" is not taken for a shape); nullopt for
// anything else ("int 7", "Tensor").
std::optional<TensorType> TensorTypeOf(const std::string& text);

// Sets j["dtype"] and j["shape"] from TensorTypeOf(text); both null when it
// is not a tensor.
void AddTensorType(nlohmann::json& j, const std::string& text);

}  // namespace tsctl
