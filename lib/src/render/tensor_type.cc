#include "tensor_type.h"

#include <cctype>

#include "tsctl/inputs.h"

namespace tsctl {

void AddTensorDesc(nlohmann::json& j, const std::optional<TensorDesc>& tensor) {
  j["dtype"] = tensor ? nlohmann::json(tensor->dtype) : nlohmann::json(nullptr);
  j["shape"] = tensor ? nlohmann::json(tensor->shape) : nlohmann::json(nullptr);
}

std::optional<TensorDesc> SpecTensor(const std::string& value) {
  // A bare number ("3") is an int argument as often as a 1-D shape: a spec
  // counts only with a dtype or an "x" in it.
  const bool spec_like = value.find(':') != std::string::npos || value.find('x') != std::string::npos;
  if (value.empty() || !spec_like ||
      !(std::isdigit(static_cast<unsigned char>(value[0])) || value.rfind("scalar:", 0) == 0)) {
    return std::nullopt;
  }
  try {
    InputSpec spec = ParseInputSpec(value);
    return TensorDesc{spec.dtype, spec.shape};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace tsctl
