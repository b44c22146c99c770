// Names joined for a message: all of them, or the first few and how many
// there are in all (a message never grows with the archive).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tsctl {

inline std::string JoinAll(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

// "a, b, c, ... (12 in all)" for `max` 3.
inline std::string JoinSome(const std::vector<std::string>& v, size_t max, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? sep : "") + v[i];
  if (v.size() > max) s += sep + std::string("... (") + std::to_string(v.size()) + " in all)";
  return s;
}

}  // namespace tsctl
