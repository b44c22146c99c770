// Small text helpers in human units: on/off, milliseconds. Shared by
// bench's renderers and its sweep planning. Not a public interface.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

namespace tsctl {

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
