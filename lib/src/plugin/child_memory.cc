// The memory a LibTorch child may grow by (torch_child.h): the machine's,
// what is available, and a run's share of it.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "torch_child.h"

namespace tsctl {

uint64_t MachineMemoryBytes() {
  return static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE));
}

uint64_t AvailableMemoryBytes() {
  // Test hook: the memory a test pretends is available (bytes), so that the
  // per-run budget can be checked at a safe scale on any machine.
  if (const char* test = std::getenv("TSCTL_TEST_AVAILABLE_MEMORY")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(test, &end, 10);
    if (end && *end == '\0' && v > 0) return v;
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      const uint64_t kib = std::strtoull(line.c_str() + 13, nullptr, 10);
      if (kib > 0) return std::min(kib << 10, MachineMemoryBytes());
    }
  }
  return MachineMemoryBytes();
}

uint64_t DefaultChildMemoryLimit(size_t concurrent) {
  return std::min<uint64_t>(AvailableMemoryBytes() / 2 / std::max<size_t>(concurrent, 1), uint64_t{8} << 30);
}

size_t JobsWithinMemory(size_t jobs) {
  const uint64_t half = AvailableMemoryBytes() / 2;
  const size_t fit = static_cast<size_t>(std::max<uint64_t>(half / kMinChildMemory, 1));
  return std::max<size_t>(std::min(jobs, fit), 1);
}

}  // namespace tsctl
