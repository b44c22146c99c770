// Tests of the LibTorch side: these link LibTorch and the plugin's code.
#include <torch/cuda.h>
#include <torch/script.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backend.h"
#include "check_model.h"
#include "tensors.h"
#include "test_util.h"
#include "tsctl/stamp.h"

// c10 (logging_is_not_google_glog.h) defines a CHECK that aborts the
// process; Catch's, included last, must be the one these tests use, so that
// a failed check is reported and the other cases still run.
#undef CHECK
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

namespace fs = std::filesystem;

TEST_CASE("stamped archives load in LibTorch with their extra files", "[torch][stamp]") {
  char tmpl[] = "/tmp/tsctl-torch-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  fs::path file = dir / "m.pt";
  fs::copy_file(tsctl::test::TestData("scripted_multi.pt"), file);
  tsctl::StampOptions o;
  o.set = {{"owner", "alice"}};
  o.files = {{"notes.txt", "hello"}};
  tsctl::Stamp(file.string(), o);

  torch::jit::ExtraFilesMap extra{{"producer_info.json", ""}, {"notes.txt", ""}};
  torch::jit::Module stamped = torch::jit::load(file.string(), torch::kCPU, extra);
  CHECK(extra["notes.txt"] == "hello");
  CHECK(nlohmann::json::parse(extra["producer_info.json"])["owner"] == "alice");
  torch::jit::Module original = torch::jit::load(tsctl::test::TestData("scripted_multi.pt"));
  auto a = original.named_buffers(), b = stamped.named_buffers();
  auto pa = original.named_parameters(), pb = stamped.named_parameters();
  REQUIRE(pa.size() == pb.size());
  for (auto ia = pa.begin(), ib = pb.begin(); ia != pa.end(); ++ia, ++ib) {
    CHECK((*ia).name == (*ib).name);
    CHECK(torch::equal((*ia).value, (*ib).value));
  }
  tsctl::test::RemoveTree(dir.string());
}

TEST_CASE("archives saved by tsctl carry the producer record", "[torch][stamp]") {
  tsctl::CreateTorchBackend();  // installs the export hook
  torch::jit::Module m("Tiny");
  m.register_parameter("w", torch::ones({2}), false);
  m.define(R"JIT(
    def forward(self, x):
        return x * self.w
  )JIT");
  std::stringstream buffer;
  m.save(buffer);
  torch::jit::ExtraFilesMap extra{{"producer_info.json", ""}};
  torch::jit::load(buffer, torch::kCPU, extra);
  auto producer = nlohmann::json::parse(extra["producer_info.json"]);
  CHECK(producer["written_by"] == "tsctl");
  CHECK(producer.contains("libtorch_version"));
  CHECK(producer.contains("time"));
}

#include "bench_runner.h"

TEST_CASE("bench: times, profiles and traces a real archive", "[torch][bench]") {
  tsctl::BenchOptions o;
  o.path = tsctl::test::TestData("traced_cnn.pt");
  o.inputs = {tsctl::ParseInputSpec("1x3x32x32")};
  o.warmup = 3;
  o.iters = 20;
  o.profile = true;
  o.profile_shapes = true;
  char tmpl[] = "/tmp/tsctl-trace-XXXXXX";
  int fd = ::mkstemp(tmpl);
  ::close(fd);
  o.trace_path = tmpl;
  tsctl::BenchResult r = tsctl::RunBench(o);
  CHECK(r.latencies_ns.size() == 20);
  CHECK(r.warmup_ns.size() == 3);
  CHECK(r.first_ns == r.warmup_ns[0]);
  CHECK(r.load_ns > 0);
  REQUIRE(!r.ops.empty());
  bool conv = false;
  for (const auto& op : r.ops) {
    conv |= op.name.find("conv") != std::string::npos;
    CHECK(op.self_ns <= op.total_ns);
    CHECK(op.calls % 20 == 0);  // every timed call runs the same operators
  }
  CHECK(conv);
  auto trace = nlohmann::json::parse(tsctl::test::Slurp(tmpl));
  CHECK(trace["traceEvents"].size() > 20);
  ::unlink(tmpl);
}

TEST_CASE("bench: several instances, shared weights", "[torch][bench]") {
  tsctl::BenchOptions o;
  o.path = tsctl::test::TestData("traced_cnn.pt");
  o.inputs = {tsctl::ParseInputSpec("1x3x32x32")};
  o.warmup = 2;
  o.iters = 10;
  o.instances = 2;
  o.share_weights = true;
  tsctl::BenchResult r = tsctl::RunBench(o);
  CHECK(r.latencies_ns.size() == 20);
  CHECK(r.instances == 2);
}

TEST_CASE("bench: sampled profiling sees fewer calls", "[torch][bench]") {
  tsctl::BenchOptions o;
  o.path = tsctl::test::TestData("traced_cnn.pt");
  o.inputs = {tsctl::ParseInputSpec("1x3x32x32")};
  o.warmup = 2;
  o.iters = 200;
  o.profile = true;
  o.profile_sample = 0.05;
  tsctl::BenchResult r = tsctl::RunBench(o);
  uint64_t calls = 0;
  for (const auto& op : r.ops) calls += op.calls;
  tsctl::BenchOptions full = o;
  full.profile_sample = 1.0;
  full.iters = 200;
  tsctl::BenchResult all = tsctl::RunBench(full);
  uint64_t all_calls = 0;
  for (const auto& op : all.ops) all_calls += op.calls;
  CHECK(calls > 0);
  CHECK(calls < all_calls / 4);
}

// [cuda] cases run as ctest's torch_unit_cuda, only where a device is
// visible (elsewhere that test is skipped, not passed).
TEST_CASE("bench: CUDA", "[torch][bench][cuda]") {
  REQUIRE(torch::cuda::is_available());
  tsctl::BenchOptions o;
  o.path = tsctl::test::TestData("traced_cnn.pt");
  o.inputs = {tsctl::ParseInputSpec("1x3x32x32")};
  o.device = "cuda";
  o.warmup = 3;
  o.iters = 20;
  tsctl::BenchResult r = tsctl::RunBench(o);
  CHECK(r.latencies_ns.size() == 20);
  CHECK(r.cuda_peak_bytes > 0);
}

TEST_CASE("validate's model check on CUDA: the CPU's reference holds, runs repeat", "[torch][validate][cuda]") {
  REQUIRE(torch::cuda::is_available());
  char tmpl[] = "/tmp/tsctl-cuda-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  tsctl::ModelCheckOptions cpu;
  cpu.path = tsctl::test::TestData("traced_cnn.pt");
  cpu.inputs = {tsctl::ParseInputSpec("2x3x32x32")};
  cpu.record_reference_path = (dir / "ref.pt").string();
  tsctl::ModelCheckResult recorded = tsctl::CheckModel(cpu);
  REQUIRE(recorded.recorded);

  tsctl::ModelCheckOptions gpu;
  gpu.path = cpu.path;
  gpu.device = "cuda";
  gpu.reference_path = cpu.record_reference_path;
  gpu.rtol = {1e-4};
  gpu.atol = {1e-5};
  tsctl::ModelCheckResult r = tsctl::CheckModel(gpu);
  CHECK(r.loaded);
  CHECK(r.ran);
  CHECK(r.deterministic == true);
  REQUIRE(r.reference_compared);
  for (const auto& leaf : r.reference) CHECK(leaf.pass);
  tsctl::test::RemoveTree(dir.string());
}

TEST_CASE("the child describes tensors typed: dtype as tsctl names it, shape, device", "[torch]") {
  auto d = tsctl::DescOf(at::zeros({1, 10}));
  REQUIRE(d);
  CHECK(d->dtype == "float32");
  CHECK(d->shape == std::vector<int64_t>{1, 10});
  CHECK(d->device == "cpu");
  CHECK(tsctl::DescOf(at::zeros({}, at::kLong))->dtype == "int64");
  CHECK(tsctl::DescOf(at::zeros({}, at::kLong))->shape.empty());
  CHECK(tsctl::DescOf(at::zeros({4}, at::kComplexFloat))->dtype == "complex64");
  CHECK(tsctl::DescOf(at::quantize_per_tensor(at::zeros({2, 3}), 0.1, 0, at::kQUInt8))->dtype == "quint8");
  CHECK_FALSE(tsctl::DescOf(c10::IValue(int64_t{7})));
  CHECK_FALSE(tsctl::DescOf(at::Tensor()));
}
