// Small text helpers in human units: on/off, milliseconds, a shape as
// "[1, 3, 8, 8]", a count with thousands separators, a short number. Shared by the
// renderers and bench's sweep planning. Not a public interface.
#pragma once

#include <cmath>
#include <cstdio>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

namespace tsctl {

// "[1, 3, 8, 8]".
inline std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// "12,594".
// (Built forwards: GCC 12's -Wstringop-overflow misreads string::insert
// inlined into some callers.)
inline std::string Grouped(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

// "0.5", "2.79195", "1e-07", "inf": six significant digits.
inline std::string ShortNumber(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// "0.295", "1e-05", "2.4e-07": three significant digits (errors, tolerances).
inline std::string ThreeDigits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

inline std::string OnOff(bool v) { return v ? "on" : "off"; }
inline std::string OptOnOff(const std::optional<bool>& v) { return v ? OnOff(*v) : "default"; }

// "0.074 ms", "12.60 ms": nanoseconds as milliseconds, 3 or 4 significant digits.
inline std::string Ms(double ns) {
  char buf[32];
  double ms = ns / 1e6;
  std::snprintf(buf, sizeof buf, ms < 0.01 ? "%.4f ms" : ms < 1 ? "%.3f ms" : ms < 100 ? "%.2f ms" : "%.1f ms", ms);
  return buf;
}

}  // namespace tsctl
