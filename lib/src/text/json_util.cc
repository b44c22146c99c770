#include "json_util.h"

#include <utility>

#include "tsctl/escape.h"

namespace tsctl {

void MakeJsonUtf8(nlohmann::json& j, int max_depth) {
  if (j.is_string()) {
    auto& s = j.get_ref<std::string&>();
    if (!IsValidUtf8(s)) s = ValidUtf8(s);
    return;
  }
  if (!j.is_structured()) return;
  if (max_depth <= 0) {
    j = nullptr;
    return;
  }
  if (j.is_array()) {
    for (auto& item : j) MakeJsonUtf8(item, max_depth - 1);
    return;
  }
  bool bad_key = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    bad_key |= !IsValidUtf8(it.key());
    MakeJsonUtf8(it.value(), max_depth - 1);
  }
  if (bad_key) {
    nlohmann::json fixed = nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it) fixed[ValidUtf8(it.key())] = std::move(it.value());
    j = std::move(fixed);
  }
}

int JsonTextDepth(std::string_view text, int limit) {
  int depth = 0, max = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) max = depth;
      if (max > limit) return max;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max;
}

std::string DumpJson(const nlohmann::json& j, int indent) {
  nlohmann::json copy = j;
  return DumpJson(std::move(copy), indent);
}

std::string DumpJson(nlohmann::json&& j, int indent) {
  MakeJsonUtf8(j);
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct JsonValue::Impl {
  nlohmann::json j;
};

struct JsonValueAccess {
  static nlohmann::json& Get(JsonValue& v) {
    if (!v.impl_) v.impl_ = std::make_unique<JsonValue::Impl>();
    return v.impl_->j;
  }
  static const nlohmann::json& Get(const JsonValue& v) {
    static const nlohmann::json kNull;
    return v.impl_ ? v.impl_->j : kNull;
  }
};

nlohmann::json& Json(JsonValue& v) { return JsonValueAccess::Get(v); }
const nlohmann::json& Json(const JsonValue& v) { return JsonValueAccess::Get(v); }

JsonValue::JsonValue() = default;
JsonValue::~JsonValue() = default;
JsonValue::JsonValue(const JsonValue& other) : impl_(other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr) {}
JsonValue::JsonValue(JsonValue&& other) noexcept = default;
JsonValue& JsonValue::operator=(const JsonValue& other) {
  if (this != &other) impl_ = other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr;
  return *this;
}
JsonValue& JsonValue::operator=(JsonValue&& other) noexcept = default;

bool JsonValue::IsNull() const { return Json(*this).is_null(); }
std::string JsonValue::Text(int indent) const { return DumpJson(Json(*this), indent); }

}  // namespace tsctl
