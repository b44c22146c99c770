// tsctl_bench_reference: the bare LibTorch baseline that
// scripts/bench_validate.py compares `tsctl validate` with. Loads a
// TorchScript archive on the CPU, runs `forward` on random inputs and prints
// one JSON line of timings:
//
//   tsctl_bench_reference ARCHIVE --input 1x3x224x224[:float32] [--input ...]
//                         [--iters N] [--warmup N] [--threads N]
//
// {"load_ms":..., "first_ms":..., "mean_us":..., "median_us":..., "iters":N}
// first_ms is the first forward call (the first warm-up call, else the first
// timed one); mean_us and median_us are over the N timed calls.
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "tsctl_bench_reference: %s\n"
               "usage: tsctl_bench_reference ARCHIVE --input AxBxC[:float32] [--input ...] "
               "[--iters N] [--warmup N] [--threads N]\n",
               why.c_str());
  std::exit(2);
}

std::vector<int64_t> ParseShape(const std::string& spec) {
  std::string dims = spec.substr(0, spec.find(':'));
  std::string dtype = spec.find(':') == std::string::npos ? "float32" : spec.substr(spec.find(':') + 1);
  if (dtype != "float32" && dtype != "float") Usage("only float32 inputs are supported: " + spec);
  std::vector<int64_t> shape;
  size_t pos = 0;
  while (true) {
    size_t x = dims.find('x', pos);
    std::string d = dims.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos) Usage("bad shape: " + spec);
    shape.push_back(std::stoll(d));
    if (x == std::string::npos) return shape;
    pos = x + 1;
  }
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
  std::string archive;
  std::vector<std::vector<int64_t>> shapes;
  int iters = 10, warmup = 1, threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--input") shapes.push_back(ParseShape(value()));
    else if (arg == "--iters") iters = std::atoi(value().c_str());
    else if (arg == "--warmup") warmup = std::atoi(value().c_str());
    else if (arg == "--threads") threads = std::atoi(value().c_str());
    else if (!arg.empty() && arg[0] == '-') Usage("unknown option " + arg);
    else if (archive.empty()) archive = arg;
    else Usage("one archive only");
  }
  if (archive.empty()) Usage("no archive given");
  if (iters < 1 || warmup < 0) Usage("--iters must be at least 1 and --warmup at least 0");
  if (threads > 0) at::set_num_threads(threads);

  try {
    auto t0 = Clock::now();
    torch::jit::Module module = torch::jit::load(archive, torch::Device(torch::kCPU));
    module.eval();
    double load_ms = Ms(Clock::now() - t0);

    c10::InferenceMode guard;
    std::vector<c10::IValue> inputs;
    for (const auto& shape : shapes) inputs.emplace_back(torch::randn(shape));
    double first_ms = -1;
    for (int i = 0; i < warmup; ++i) {
      auto t = Clock::now();
      module.forward(inputs);
      if (i == 0) first_ms = Ms(Clock::now() - t);
    }
    std::vector<double> us;
    for (int i = 0; i < iters; ++i) {
      auto t = Clock::now();
      module.forward(inputs);
      us.push_back(Ms(Clock::now() - t) * 1000);
    }
    if (first_ms < 0) first_ms = us[0] / 1000;
    double mean = 0;
    for (double u : us) mean += u / us.size();
    std::sort(us.begin(), us.end());
    double median = us.size() % 2 ? us[us.size() / 2] : (us[us.size() / 2 - 1] + us[us.size() / 2]) / 2;
    std::printf("{\"load_ms\": %.3f, \"first_ms\": %.3f, \"mean_us\": %.3f, \"median_us\": %.3f, \"iters\": %d}\n",
                load_ms, first_ms, mean, median, iters);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tsctl_bench_reference: %s: %s\n", archive.c_str(), e.what());
    return 1;
  }
  return 0;
}
