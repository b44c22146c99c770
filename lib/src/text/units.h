// Small text helpers in human units: on/off, milliseconds, a shape as
// "[1, 3, 8, 8]", a count with thousands separators, a short number. Shared by the
// renderers and bench's sweep planning. Not a public interface.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

// A double as Python's repr writes it: the shortest digits that read back
// the same, fixed notation for exponents -4 to 15 (".0" on integers), else
// d.ddde+XX; "nan", "inf", "-inf". The graph printers' (.pt2, ExecuTorch).
inline std::string PyFloat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  if (ec != std::errc()) return "nan";
  const std::string sci(buf, end);  // "-1.2345e-05"
  const size_t e = sci.find('e');
  const int exponent = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] >= '0' && sci[i] <= '9') digits += sci[i];
  }
  const std::string sign = sci[0] == '-' ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    std::snprintf(buf, sizeof buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return sign + digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + buf;
  }
  if (exponent < 0) return sign + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  const size_t point = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= point) return sign + digits + std::string(point - digits.size(), '0') + ".0";
  return sign + digits.substr(0, point) + "." + digits.substr(point);
}

}  // namespace tsctl
