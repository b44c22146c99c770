#include <catch2/catch.hpp>

#include <sstream>

#include "../../lib/src/render/render_json.h"
#include "tsctl/bench.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/inputs.h"

using namespace tsctl;

TEST_CASE("bench: statistics", "[bench]") {
  BenchResult r;
  for (uint64_t v = 1; v <= 100; ++v) r.latencies_ns.push_back(v * 1000);
  r.wall_ns = 1'000'000'000;
  Stats s = ComputeStats(r, {50, 90, 99});
  CHECK(s.min == 1000);
  CHECK(s.max == 100000);
  CHECK(s.mean == Approx(50500));
  CHECK(s.median == Approx(50500));
  REQUIRE(s.percentiles.size() == 3);
  CHECK(s.percentiles[1].second == Approx(90100));
  CHECK(s.percentiles[0].second <= s.percentiles[1].second);
  CHECK(s.percentiles[1].second <= s.percentiles[2].second);
  CHECK(s.percentiles[2].second <= s.max);
  CHECK(s.throughput == Approx(100));
}

TEST_CASE("bench: warm-up settles when the curve flattens", "[bench]") {
  std::vector<uint64_t> warm = {90000, 30000, 12000, 10100, 9900, 10000, 10050, 9950, 10000, 10020};
  CHECK(SettledAfter(warm, 10000) == 3);
  std::vector<uint64_t> never = {90000, 60000, 40000, 30000, 20000};
  CHECK(SettledAfter(never, 10000) == -1);
  std::vector<uint64_t> outlier = {50000, 10000, 10000, 25000, 10000, 10000};
  CHECK(SettledAfter(outlier, 10000) == 1);
}

namespace {

std::string Warning(const BenchResult& r, const std::string& what) {
  for (const auto& x : BenchWarnings(r, ComputeStats(r, {}))) {
    if (x.find(what) != std::string::npos) return x;
  }
  return "";
}

}  // namespace

TEST_CASE("bench: trtexec-style warnings", "[bench]") {
  BenchResult r;
  r.latencies_ns = {100, 100, 100, 300, 100, 100};
  r.wall_ns = 1000;
  r.first_ns = 100000;
  CHECK_FALSE(Warning(r, "first call").empty());
  CHECK_FALSE(Warning(r, "no warm-up").empty());
  CHECK(Warning(r, "unstable timings").empty());  // 6 calls: too few to judge the spread
}

TEST_CASE("bench: unstable means a wide middle, not a few outliers", "[bench]") {
  BenchResult r;
  r.threads = 1;
  r.wall_ns = 1000000;
  // A steady loop with a few calls 5x the median (another process took the
  // core): the coefficient of variation is about 40%, the middle half tight.
  r.latencies_ns.assign(200, 1000);
  for (size_t i = 0; i < 200; ++i) r.latencies_ns[i] += (i % 7) * 10;
  for (size_t i = 0; i < 200; i += 40) r.latencies_ns[i] = 5000;
  CHECK(Warning(r, "unstable timings").empty());
  // Half the calls 30% slower: (1300 - 1030) / 1300 = 21%, unstable; --threads 1 is
  // not offered on one thread.
  for (size_t i = 0; i < 200; i += 2) r.latencies_ns[i] = 1300;
  const std::string one = Warning(r, "unstable timings");
  CHECK_THAT(one, Catch::Contains("the middle half of the calls spans 21% of the median"));
  CHECK_THAT(one, !Catch::Contains("--threads 1"));
  r.threads = 4;
  CHECK_THAT(Warning(r, "unstable timings"), Catch::Contains("--threads 1"));
}

TEST_CASE("bench: a late settle is not called unsettled", "[bench]") {
  // Settled from the 4th of 5 warm-up calls: the report says "settled after 3"
  // and the warning must not claim the last calls still differ.
  BenchResult r;
  r.latencies_ns = {10000, 10000, 10000, 10000};
  r.wall_ns = 40000;
  r.warmup_ns = {90000, 40000, 30000, 11000, 10500};
  Stats s = ComputeStats(r, {});
  REQUIRE(SettledAfter(r.warmup_ns, s.median) == 3);
  bool late = false, differ = false;
  for (const auto& x : BenchWarnings(r, s)) {
    late |= x.find("settled late: only the last 2 of 5") != std::string::npos;
    differ |= x.find("still differ") != std::string::npos;
  }
  CHECK(late);
  CHECK_FALSE(differ);
}

TEST_CASE("bench: warm-up advice on a quick model follows the timed calls, not the warm-up's", "[bench]") {
  // As seen on a 0.4 ms model (bench with defaults): every warm-up call
  // 0.52-0.57 ms, over 15% above the timed median of about 0.435 ms, and the
  // timed calls from their first on at that median. The timings the warm-up
  // protects are settled: no advice.
  BenchResult r;
  r.warmup_ns = {571000, 530000, 552000, 518000, 525000, 533000, 520000, 541000};
  for (size_t i = 0; i < 200; ++i) r.latencies_ns.push_back(430000 + (i * 7919) % 11000);
  r.wall_ns = 90000000;
  const Stats s = ComputeStats(r, {});
  CHECK(SettledAfter(r.warmup_ns, s.median) == -1);
  CHECK(TimedStartOff(r.latencies_ns, s.median) < 0.15);
  for (const std::string& w : BenchWarnings(r, s)) CHECK(w.find("warm-up") == std::string::npos);
  // The same warm-up, but the timed calls begin slow (20 of 200 at 0.6 ms):
  // the warm-up was too short, and the advice says what shows it.
  for (size_t i = 0; i < 20; ++i) r.latencies_ns[i] = 600000;
  const Stats slow = ComputeStats(r, {});
  std::string advice;
  for (const std::string& w : BenchWarnings(r, slow)) {
    if (w.find("warm-up not settled") == 0) advice = w;
  }
  CHECK_THAT(advice, Catch::Contains("the first 20 timed calls are 3"));
  CHECK_THAT(advice, Catch::Contains("% off the timed median; raise --warmup"));
  // Under 10 timed calls: too few to tell, the warm-up's own curve decides.
  CHECK(TimedStartOff({1, 2, 3}, 2) == -1);
}

TEST_CASE("bench: sweep recommends only beyond the noise", "[bench]") {
  auto row = [](bool optimized, double mean, double stddev) {
    SweepRow r;
    r.ok = true;
    r.settings.optimized_execution = optimized;
    r.settings.jit_profiling = true;
    r.settings.jit_executor = true;
    r.settings.tensor_fuser = true;
    r.mean_ns = mean;
    r.stddev_ns = stddev;
    r.iterations = 100;
    return r;
  };
  // 80 vs 81 us with a 5 us spread: the 1 us is noise, keep the defaults.
  std::vector<SweepRow> close = {row(true, 81000, 5000), row(false, 80000, 5000)};
  SweepChoice c = ChooseSweep(close);
  CHECK(c.fastest == &close[1]);
  CHECK(c.defaults == &close[0]);
  CHECK(c.recommended == &close[0]);
  CHECK(c.reason.find("keep the defaults") != std::string::npos);
  // 60 vs 81 us with the same spread: recommend it.
  std::vector<SweepRow> far = {row(true, 81000, 5000), row(false, 60000, 5000)};
  c = ChooseSweep(far);
  CHECK(c.recommended == &far[1]);
  // A tiny but certain difference under 1% is not worth a setting.
  std::vector<SweepRow> tiny = {row(true, 100000, 10), row(false, 99500, 10)};
  CHECK(ChooseSweep(tiny).recommended == &tiny[0]);
  std::ostringstream text;
  RenderSweep(close, text);
  CHECK(text.str().find("no parameters needed") != std::string::npos);
  CHECK(text.str().find("DISABLE_OPTIMIZED_EXECUTION") == std::string::npos);
}

TEST_CASE("bench: API usage counts are not called call counts", "[bench]") {
  // LibTorch logs most events once per process: 2 instances and 14 calls
  // still show 1, and the report must say what the number is.
  BenchResult r;
  r.latencies_ns = {100, 100};
  r.wall_ns = 200;
  r.api_usage = {{"torch.graph_executor.run", 1}};
  std::ostringstream text;
  RenderText(r, {}, text);
  CHECK(text.str().find("not call counts") != std::string::npos);
}

TEST_CASE("bench: Triton parameters and sweep combinations", "[bench]") {
  ExecutionSettings s;
  s.optimized_execution = false;
  s.jit_profiling = true;
  std::string p = TritonParameters(s);
  CHECK(p.find("key: \"DISABLE_OPTIMIZED_EXECUTION\"\n  value: { string_value: \"true\" }") != std::string::npos);
  CHECK(p.find("ENABLE_JIT_PROFILING") != std::string::npos);
  CHECK(p.find("ENABLE_TENSOR_FUSER") == std::string::npos);  // left to LibTorch's default
  CHECK(SweepSettings(false).size() == 16);
}

TEST_CASE("bench: AOTInductor sweep rows and their parameters", "[bench]") {
  std::vector<SweepRow> rows = AotiSweepRows(8);
  REQUIRE(rows.size() == 6);  // threads default, 1, 4; inference mode on, off
  CHECK(IsDefaultSweepRow(rows[0]));
  CHECK(TritonParameters(rows[0]).empty());
  CHECK(AotiSweepRows(1).size() == 2);
  CHECK(AotiSweepRows(2).size() == 4);
  const std::string p = TritonParameters(rows[3]);  // 1 thread, no_grad
  CHECK(p.find("key: \"INFERENCE_MODE\"\n  value: { string_value: \"false\" }") != std::string::npos);
  CHECK(p.find("key: \"INTRA_OP_THREAD_COUNT\"\n  value: { string_value: \"1\" }") != std::string::npos);
  CHECK(p.find("DISABLE_OPTIMIZED_EXECUTION") == std::string::npos);  // TorchScript's executor only
  for (SweepRow& r : rows) {
    r.ok = true;
    r.mean_ns = 1000;
    r.iterations = 10;
  }
  rows[4].mean_ns = 100;  // clearly faster: recommended
  std::ostringstream text;
  RenderSweep(rows, text);
  CHECK(text.str().find("threads   inference") != std::string::npos);
  CHECK(text.str().find("INTRA_OP_THREAD_COUNT") != std::string::npos);
  nlohmann::json j = SweepJson(rows);
  CHECK(j["rows"][4]["threads"] == 4);
  CHECK(j["recommended"] == "inference mode, 4 intra-op threads");
}

TEST_CASE("bench: a whole Triton config.pbtxt", "[bench]") {
  BenchResult r;
  r.path = "m.pt";
  r.device = "cpu";
  r.instances = 2;
  // The child's typed descriptions are what the config reads, not the strings.
  r.inputs = {"x=1x3x8x8:float32", "ids=2x5:int64", "n=3"};
  r.input_tensors = {tsctl::TensorDesc{"float32", {1, 3, 8, 8}}, tsctl::TensorDesc{"int64", {2, 5}}, std::nullopt};
  r.outputs = {{"output[0]", "Float[1, 10]", tsctl::TensorDesc{"float32", {1, 10}}},
               {"output[1]", "Long[1]", tsctl::TensorDesc{"int64", {1}}},
               {"output[2]", "int 7", std::nullopt}};
  const std::string ts = TritonConfig(r, "");
  CHECK(ts.find("platform: \"pytorch_libtorch\"\nmax_batch_size: 0\n") != std::string::npos);
  CHECK(ts.find("name: \"INPUT__0\"\n    data_type: TYPE_FP32\n    dims: [ 1, 3, 8, 8 ]") != std::string::npos);
  CHECK(ts.find("name: \"INPUT__1\"\n    data_type: TYPE_INT64\n    dims: [ 2, 5 ]") != std::string::npos);
  CHECK(ts.find("# INPUT__2: 3 has no Triton data_type; left out") != std::string::npos);
  CHECK(ts.find("name: \"OUTPUT__1\"\n    data_type: TYPE_INT64") != std::string::npos);
  CHECK(ts.find("# OUTPUT__2: int 7 has no Triton data_type") != std::string::npos);
  CHECK(ts.find("count: 2\n    kind: KIND_CPU") != std::string::npos);
  r.aoti = true;
  r.device = "cuda:1";
  r.outputs = {{"output['scores']", "Float[1, 10]", tsctl::TensorDesc{"float32", {1, 10}}}};
  const std::string aoti = TritonConfig(r, "parameters: {}\n");
  CHECK(aoti.find("platform: \"torch_aoti\"") != std::string::npos);
  CHECK(aoti.find("name: \"ARGS[0]\"") != std::string::npos);
  CHECK(aoti.find("name: \"RESULT[scores]\"") != std::string::npos);
  CHECK(aoti.find("kind: KIND_GPU\n    gpus: [ 1 ]") != std::string::npos);
  CHECK(aoti.substr(aoti.size() - 15) == "parameters: {}\n");
  r.outputs = {{"output", "Float[1, 10]", tsctl::TensorDesc{"float32", {1, 10}}}};
  CHECK(TritonConfig(r, "").find("name: \"RESULT\"\n") != std::string::npos);
}

TEST_CASE("bench: JSON and text agree", "[bench]") {
  BenchResult r;
  r.latencies_ns = {1000, 2000, 3000};
  r.warmup_ns = {9000, 3000, 2000};
  r.wall_ns = 6000;
  r.ops = {{"aten::conv2d", "", 3, 3000, 2000}};
  r.profiled_ns = 3000;
  nlohmann::json j = ToJson(r, {50, 90});
  CHECK(j["schema_version"] == kBenchSchemaVersion);
  CHECK(j["iterations"] == 3);
  CHECK(j["latency_ns"]["p50"].get<double>() <= j["latency_ns"]["p90"].get<double>());
  CHECK(j["latency_ns"]["p90"].get<double>() <= j["latency_ns"]["max"].get<double>());
  CHECK(j["profile"]["ops"][0]["calls"] == 3);
  std::ostringstream text;
  RenderText(r, {50, 90}, text);
  CHECK(text.str().find("latency over 3 calls") != std::string::npos);
  CHECK(text.str().find("aten::conv2d") != std::string::npos);
}

TEST_CASE("bench: the text report escapes what the model and the caller named", "[bench]") {
  BenchResult r;
  r.latencies_ns = {1000};
  r.wall_ns = 1000;
  r.path = "m\xff\x1b[2J.pt";
  // A record_function scope in the model's code names an operator row; the
  // long one is cut before 36 columns without splitting a UTF-8 character.
  r.ops = {{"scope\x1b]0;owned\x07", "", 1, 1000, 1000}, {std::string(32, 'a') + "\xc3\xa9\xc3\xa9\xc3\xa9", "", 1, 10, 10}};
  r.profiled_ns = 1010;
  std::ostringstream text;
  RenderText(r, {50}, text);
  const std::string t = text.str();
  CHECK(t.find('\x1b') == std::string::npos);
  CHECK(t.find('\x07') == std::string::npos);
  CHECK(t.find("m\\xff\\x1b[2J.pt") != std::string::npos);
  CHECK(t.find("scope\\x1b]0;owned\\x07") != std::string::npos);
  CHECK(t.find(std::string(32, 'a') + "...") != std::string::npos);
  CHECK(IsValidUtf8(t));
}

TEST_CASE("inputs: specs", "[inputs]") {
  InputSpec a = ParseInputSpec("1x3x224x224");
  CHECK(a.shape == std::vector<int64_t>{1, 3, 224, 224});
  CHECK(a.dtype == "float32");
  CHECK(ParseInputSpec("4:int64").dtype == "int64");
  CHECK(ParseInputSpec("2x3:bool").dtype == "bool");
  CHECK(ParseInputSpec("1x3x8x8:half:channels_last").channels_last);
  CHECK(ParseInputSpec("scalar:int64").shape.empty());
  CHECK(ParseInputSpec("1x3x8x8:float16:channels_last").ToString() == "1x3x8x8:float16:channels_last");
  for (const char* bad : {"", "1xx2", "a", "1x2:complex", "1x2:float32:channels_last", "1:int64:x:y", "-1x2"}) {
    INFO(bad);
    CHECK_THROWS_AS(ParseInputSpec(bad), Error);
  }
}

TEST_CASE("bench: the report says how many calls each phase made and what bounded it", "[bench]") {
  BenchResult r;
  r.latencies_ns = {1000, 2000, 3000};
  r.warmup_ns = {9000, 3000};
  r.wall_ns = 6000;
  r.warmup_seconds = 0.2;
  r.duration_seconds = 3;
  r.inputs = {"x=1x3x8x8:float32", "Tensor", "Long[2, 2]"};
  r.input_tensors = {tsctl::TensorDesc{"float32", {1, 3, 8, 8}}, std::nullopt, tsctl::TensorDesc{"int64", {2, 2}}};
  nlohmann::json j = ToJson(r, {50});
  CHECK(j["runs"]["warmup_calls"] == 2);
  CHECK(j["runs"]["timed_calls"] == 3);
  CHECK(j["runs"]["timed"] == nlohmann::json({{"by", "time"}, {"calls", nullptr}, {"seconds", 3}}));
  CHECK(j["runs"]["warmup"] == nlohmann::json({{"by", "time"}, {"calls", nullptr}, {"seconds", 0.2}}));
  CHECK(j["input_tensors"][0] == nlohmann::json({{"name", "x"}, {"dtype", "float32"}, {"shape", {1, 3, 8, 8}}}));
  CHECK(j["input_tensors"][1]["dtype"].is_null());
  CHECK(j["input_tensors"][2] == nlohmann::json({{"name", ""}, {"dtype", "int64"}, {"shape", {2, 2}}}));
  std::ostringstream text;
  RenderText(r, {50}, text);
  CHECK(text.str().find("runs        2 warm-up calls (--warmup-time 0.2 s), 3 timed calls (--duration 3 s)\n") !=
        std::string::npos);
  // Under 10 timed calls in a --duration: the percentiles are rough, and it says so.
  bool rough = false;
  for (const std::string& w : BenchWarnings(r, ComputeStats(r, {50}))) rough |= w.find("only 3 timed calls") == 0;
  CHECK(rough);

  r.warmup_count = 2;
  r.warmup_seconds = 0;
  r.iters_count = 3;
  r.duration_seconds = 0;
  j = ToJson(r, {50});
  CHECK(j["runs"]["timed"] == nlohmann::json({{"by", "count"}, {"calls", 3}, {"seconds", nullptr}}));
  std::ostringstream counted;
  RenderText(r, {50}, counted);
  CHECK(counted.str().find("runs        2 warm-up calls (--warmup 2), 3 timed calls (--iters 3)\n") != std::string::npos);
  for (const std::string& w : BenchWarnings(r, ComputeStats(r, {50}))) CHECK(w.find("only 3 timed calls") != 0);
}

TEST_CASE("bench: warm-up advice names the flag that bounded the warm-up", "[bench]") {
  BenchResult r;
  r.latencies_ns = {1000, 1000, 1000, 1000};
  r.warmup_ns = {9000, 8000, 7000};  // never within 15% of the median
  r.wall_ns = 4000;
  r.warmup_seconds = 0.2;
  auto advice = [&] {
    for (const std::string& w : BenchWarnings(r, ComputeStats(r, {50}))) {
      if (w.find("warm-up not settled") == 0) return w;
    }
    return std::string();
  };
  CHECK(advice().find("raise --warmup-time (e.g. --warmup-time 1)") != std::string::npos);
  r.warmup_count = 3;
  r.warmup_seconds = 0;
  CHECK(advice().find("raise --warmup (e.g. --warmup 20)") != std::string::npos);
}

TEST_CASE("ParseShapeRange: NAME:MIN,OPT,MAX, the first's dtype and fill carried to the others", "[bench]") {
  tsctl::ShapeRange r = tsctl::ParseShapeRange("ids:1x16:int64:randint:0:100,4x16,8x128");
  CHECK(r.name == "ids");
  REQUIRE(r.specs.size() == 3);
  CHECK(r.specs[0].ToString() == "1x16:int64:randint:0:100");
  CHECK(r.specs[1].ToString() == "4x16:int64:randint:0:100");
  CHECK(r.specs[2].ToString() == "8x128:int64:randint:0:100");
  // A dtype given on a later one is its own.
  CHECK(tsctl::ParseShapeRange("x:1x3:float32,2x3:float64,4x3").specs[1].dtype == "float64");
  CHECK_THROWS_AS(tsctl::ParseShapeRange("1x3,2x3,4x3"), tsctl::Error);
  CHECK_THROWS_AS(tsctl::ParseShapeRange("x:1x3,2x3"), tsctl::Error);
  CHECK_THROWS_AS(tsctl::ParseShapeRange("x:1x3,2x3,4"), tsctl::Error);
}
