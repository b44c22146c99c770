// A JSON value that a result carries (validate's per-archive details, the
// producer record stamp wrote) without putting a JSON library into the API:
// opaque to users, written by the result's RenderJson and readable alone as
// text. lib builds and reads it through lib/src/text/json_util.h.
#pragma once

#include <memory>
#include <string>

namespace tsctl {

class JsonValue {
 public:
  JsonValue();  // null
  ~JsonValue();
  JsonValue(const JsonValue& other);
  JsonValue(JsonValue&& other) noexcept;
  JsonValue& operator=(const JsonValue& other);
  JsonValue& operator=(JsonValue&& other) noexcept;

  bool IsNull() const;
  // The value as JSON text, compact or indented by `indent` spaces; always
  // valid UTF-8 (bytes that are not become "\xdd", as in every report).
  std::string Text(int indent = -1) const;

 private:
  friend struct JsonValueAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;  // null: the value is null
};

}  // namespace tsctl
