// tsctl_bench_pte_loop: the baseline for `tsctl bench X.pte`, a bare loop of
// ExecuTorch's Module::execute as ExecuTorch's own documentation writes it
// (using-executorch-cpp.md): load, inputs from the method's metadata (ones),
// WARMUP calls, then ITERS timed calls; prints the median and mean call in
// nanoseconds. scripts/bench_pte_run.py compares tsctl's per-call time with it.
//
//   tsctl_bench_pte_loop PROGRAM ITERS WARMUP
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/platform/runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using executorch::extension::Module;
using executorch::runtime::EValue;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: tsctl_bench_pte_loop PROGRAM ITERS WARMUP\n");
    return 2;
  }
  executorch::runtime::runtime_init();
  Module module(argv[1], Module::LoadMode::File);
  auto meta = module.method_meta("forward");
  if (!meta.ok()) return 1;
  std::vector<executorch::extension::TensorPtr> keep;
  std::vector<EValue> inputs;
  for (size_t i = 0; i < meta->num_inputs(); ++i) {
    auto t = meta->input_tensor_meta(i);
    if (!t.ok()) return 1;
    std::vector<executorch::aten::SizesType> sizes(t->sizes().begin(), t->sizes().end());
    keep.push_back(executorch::extension::ones(sizes, t->scalar_type()));
    inputs.emplace_back(keep.back());
  }
  const int iters = std::atoi(argv[2]), warmup = std::atoi(argv[3]);
  for (int i = 0; i < warmup; ++i) {
    if (!module.execute("forward", inputs).ok()) return 1;
  }
  std::vector<double> ns;
  for (int i = 0; i < iters; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!module.execute("forward", inputs).ok()) return 1;
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count());
  }
  double sum = 0;
  for (double x : ns) sum += x;
  std::sort(ns.begin(), ns.end());
  std::printf("%.1f %.1f\n", ns[ns.size() / 2], sum / static_cast<double>(ns.size()));
  return 0;
}
