#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace tsctl::test {

inline std::string TestData(const std::string& name) { return std::string(TSCTL_TESTDATA) + "/" + name; }

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace tsctl::test
