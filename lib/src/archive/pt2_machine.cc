#include "pt2_machine.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tsctl {

std::vector<std::string> Pt2MissingCpuFeatures(const std::string& aoti_cpu_isa, const std::string& cpu_flags) {
  // inductor's names (torch/_inductor/cpu_vec_isa.py) -> Linux cpuinfo flags.
  static const std::map<std::string, std::vector<std::string>> kFlags = {
      {"AVX2", {"avx2"}},
      {"AVX512", {"avx512f", "avx512bw", "avx512vl", "avx512dq"}},
      {"AVX512_VNNI", {"avx512_vnni"}},
      {"AVX512_BF16", {"avx512_bf16"}},
      {"AVX512_FP16", {"avx512_fp16"}},
      {"AMX_TILE", {"amx_tile"}},
      {"AMX_BF16", {"amx_bf16"}},
      {"AMX_FP16", {"amx_fp16"}},
  };
  std::set<std::string> have;
  std::istringstream flags(cpu_flags);
  for (std::string f; flags >> f;) have.insert(f);
  std::vector<std::string> missing;
  std::istringstream isa(aoti_cpu_isa);
  for (std::string name; isa >> name;) {
    auto it = kFlags.find(name);
    if (it == kFlags.end()) continue;
    for (const std::string& f : it->second) {
      if (!have.count(f)) {
        missing.push_back(name);
        break;
      }
    }
  }
  return missing;
}

std::string CpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(colon + 1);
    }
  }
  return "";
}

}  // namespace tsctl
