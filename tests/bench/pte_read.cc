// tsctl_bench_pte_read FILE [N]: the time of what `tsctl inspect --format
// json FILE` does for an ExecuTorch file, in this process: ReadPte alone
// (`read`), and ReadPte then RenderPteJson (`inspect`), N times each
// (default 101) after one untimed run; prints each one's median and fastest,
// in microseconds. scripts/bench_pte.py sets them against ExecuTorch's
// deserializer in its process, both without process start-up.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tsctl/error.h"
#include "tsctl/pte.h"

namespace {

// Runs `f` n times; prints "<name>_median_us" and "<name>_min_us".
template <typename F>
void Report(const char* name, int n, F f) {
  std::vector<double> us;
  volatile size_t sink = 0;
  for (int i = 0; i < n; ++i) {
    const auto t = std::chrono::steady_clock::now();
    sink = sink + f();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count());
  }
  std::sort(us.begin(), us.end());
  std::printf("%s_median_us %.1f\n%s_min_us %.1f\n", name, us[us.size() / 2], name, us.front());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tsctl_bench_pte_read FILE [N]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int n = argc > 2 ? std::max(1, std::atoi(argv[2])) : 101;
  try {
    const size_t json_bytes = tsctl::RenderPteJson(tsctl::ReadPte(path), path).size();
    Report("read", n, [&] { return tsctl::ReadPte(path).file_size; });
    Report("inspect", n, [&] { return tsctl::RenderPteJson(tsctl::ReadPte(path), path).size(); });
    std::printf("runs %d\njson_bytes %zu\n", n, json_bytes);
  } catch (const tsctl::Error& e) {
    std::fprintf(stderr, "tsctl_bench_pte_read: %s\n", e.what());
    return 4;
  }
  return 0;
}
