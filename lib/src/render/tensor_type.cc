#include "tensor_type.h"

#include <cctype>

#include "tsctl/inputs.h"
#include "tsctl/storage_types.h"

namespace tsctl {
namespace {

// "1, 3, 224" -> {1, 3, 224}; nullopt unless it is whole numbers and ", ".
std::optional<std::vector<int64_t>> Sizes(const std::string& s) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < s.size()) {
    if (!out.empty()) {
      if (s.compare(i, 2, ", ") != 0) return std::nullopt;
      i += 2;
    }
    size_t end = i;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
    if (end == i || end - i > 18) return std::nullopt;
    out.push_back(std::stoll(s.substr(i, end - i)));
    i = end;
  }
  return out;
}

}  // namespace

std::optional<TensorType> TensorTypeOf(const std::string& text) {
  const size_t open = text.find('[');
  if (open != std::string::npos && open > 0 && text.back() == ']') {
    // c10::toString(ScalarType) names the storage class without "Storage".
    const StorageDtype* d = DtypeOfStorage(text.substr(0, open) + "Storage");
    auto sizes = Sizes(text.substr(open + 1, text.size() - open - 2));
    if (d && sizes) return TensorType{d->name, *sizes};
    return std::nullopt;
  }
  // A bare number ("3") is an int argument as often as a 1-D shape: a spec
  // counts only with a dtype or an "x" in it.
  const bool spec_like = text.find(':') != std::string::npos || text.find('x') != std::string::npos;
  if (!spec_like || !(std::isdigit(static_cast<unsigned char>(text[0])) || text.rfind("scalar:", 0) == 0)) {
    return std::nullopt;
  }
  try {
    InputSpec spec = ParseInputSpec(text);
    return TensorType{spec.dtype, spec.shape};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void AddTensorType(nlohmann::json& j, const std::string& text) {
  std::optional<TensorType> t = TensorTypeOf(text);
  j["dtype"] = t ? nlohmann::json(t->dtype) : nlohmann::json(nullptr);
  j["shape"] = t ? nlohmann::json(t->shape) : nlohmann::json(nullptr);
}

}  // namespace tsctl
