// Input specs with fills, --arg spellings, and the model-check wire format.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "model_check.h"
#include "torch_child_codec.h"
#include "torch_child.h"

#include <cmath>
#include <limits>

using tsctl::ArgSpec;
using tsctl::InputSpec;

TEST_CASE("input specs take fills and print back the same", "[inputs]") {
  InputSpec s = tsctl::ParseInputSpec("1x16:int64:randint:0:1000");
  CHECK(s.shape == std::vector<int64_t>{1, 16});
  CHECK(s.dtype == "int64");
  CHECK(s.fill == InputSpec::Fill::kRandint);
  CHECK(s.low == 0);
  CHECK(s.high == 1000);
  CHECK(s.ToString() == "1x16:int64:randint:0:1000");
  for (const char* text : {"2x3:float32:zeros", "2x3:float32:ones", "scalar:float64:fill:0.5", "1x3x8x8:float32:channels_last:zeros",
                           "4:bool"}) {
    CHECK(tsctl::ParseInputSpec(tsctl::ParseInputSpec(text).ToString()).ToString() == tsctl::ParseInputSpec(text).ToString());
  }
  CHECK(tsctl::ParseInputSpec("2x2:float32:fill:-1.5").value == -1.5);
  CHECK(tsctl::ParseInputSpec("2x2:float32").Bytes() == 16);
  CHECK(tsctl::ParseInputSpec("100000x100000x100x100:float32").Bytes() > (uint64_t{1} << 40));
  // Sizes from tsctl/dtype.h; a dtype it does not know (a stored spec) counts
  // as the widest, never as 1 byte, so no size limit is passed by its name.
  tsctl::InputSpec odd = tsctl::ParseInputSpec("2x2:float32");
  odd.dtype = "complex128";
  CHECK(odd.Bytes() == 64);
  odd.dtype = "nosuch";
  CHECK(odd.Bytes() == 64);
}

TEST_CASE("bad fills are usage errors naming the spec", "[inputs]") {
  for (const char* text : {"2x3:float32:randint:5:1", "2x3:float32:randint:1", "2x3:float32:fill", "2x3:float32:fill:abc",
                           "2x3:float32:zeros:ones", "2x3:float32:sparkly"}) {
    try {
      tsctl::ParseInputSpec(text);
      FAIL(text);
    } catch (const tsctl::Error& e) {
      CHECK(e.kind() == tsctl::ErrorKind::kUsage);
      CHECK(std::string(e.what()).find(text) != std::string::npos);
    }
  }
}

TEST_CASE("--arg splits NAME=VALUE from positional values", "[inputs]") {
  ArgSpec a = tsctl::ParseArgSpec("x=1x3x8x8:float32");
  CHECK(a.name == "x");
  CHECK(a.value == "1x3x8x8:float32");
  a = tsctl::ParseArgSpec("{\"a\": [1, 2]}");
  CHECK(a.name.empty());
  CHECK(a.value == "{\"a\": [1, 2]}");
  a = tsctl::ParseArgSpec("\"k=v\"");  // a string containing '=' is positional
  CHECK(a.name.empty());
  a = tsctl::ParseArgSpec("opts={\"k\": \"a=b\"}");
  CHECK(a.name == "opts");
  CHECK(a.value == "{\"k\": \"a=b\"}");
  CHECK_THROWS_AS(tsctl::ParseArgSpec("x="), tsctl::Error);
}

TEST_CASE("a LibTorch child's answer survives the codec, bytes and non-finite numbers kept; a missing field is an error",
          "[inputs][wire]") {
  tsctl::ModelCheckResult r;
  r.loaded = true;
  r.methods = {"forward", "predict"};
  r.ran = true;
  r.input_source = "inferred";
  r.input_args = {{"x", "1x3x224x224:float32"}};
  r.outputs = {{"output", "float32[1, 10]", 0}};
  r.deterministic = false;
  r.max_run_diff = std::numeric_limits<double>::infinity();  // an Inf on one run, a number on the other
  r.run_error = std::string("bad byte \xff\xfe here");         // LibTorch's messages need not be UTF-8
  tsctl::ReferenceLeaf leaf;
  leaf.name = "outputs[1][\"scores\"]";
  leaf.is_tensor = true;
  leaf.max_abs = 0.25;
  leaf.max_rel = std::numeric_limits<double>::quiet_NaN();
  r.reference = {leaf};
  r.candidates = {{"--arg x=1x3:float32", "raised: bad \xff"}, {"--arg x=1x8:float32", "3 NaN/Inf in output"}};
  r.guess_suspect = "3 NaN/Inf in output";
  tsctl::ChildOutcome back;
  tsctl::DecodeChildAnswer(tsctl::EncodeChildValue(r), back);
  REQUIRE(back.Answered());
  const auto& b = std::get<tsctl::ModelCheckResult>(back.value);
  CHECK(b.loaded);
  CHECK(b.methods == r.methods);
  CHECK(b.input_args.size() == 1);
  CHECK(b.input_args[0].value == "1x3x224x224:float32");
  CHECK(b.outputs[0].desc == "float32[1, 10]");
  REQUIRE(b.deterministic.has_value());
  CHECK(!*b.deterministic);
  CHECK(std::isinf(b.max_run_diff));
  CHECK(b.run_error == r.run_error);
  CHECK(b.reference[0].name == leaf.name);
  CHECK(b.reference[0].max_abs == 0.25);
  CHECK(std::isnan(b.reference[0].max_rel));
  REQUIRE(b.candidates.size() == 2);
  CHECK(b.candidates[0].outcome == "raised: bad \xff");
  CHECK(b.candidates[1].flags == "--arg x=1x8:float32");
  CHECK(b.guess_suspect == r.guess_suspect);

  auto encode = [](const nlohmann::json& j) {
    std::vector<std::uint8_t> v = nlohmann::json::to_cbor(j);
    return std::string(v.begin(), v.end());
  };
  nlohmann::json value = tsctl::ModelCheckToJson(r);
  nlohmann::json whole = {{"codec", tsctl::kChildCodecVersion}, {"type", 1}, {"value", value}};
  whole["value"].erase("ran");
  tsctl::ChildOutcome missing;
  try {
    tsctl::DecodeChildAnswer(encode(whole), missing);
    FAIL("a missing field was read as a default");
  } catch (const tsctl::Error& e) {
    CHECK(std::string(e.what()).find("'ran'") != std::string::npos);
  }
  whole["value"] = value;
  whole["codec"] = 0;
  CHECK_THROWS_AS(tsctl::DecodeChildAnswer(encode(whole), missing), tsctl::Error);
  whole["codec"] = tsctl::kChildCodecVersion;
  whole["value"]["loaded"] = "yes";
  CHECK_THROWS_AS(tsctl::DecodeChildAnswer(encode(whole), missing), tsctl::Error);
  CHECK_THROWS_AS(tsctl::DecodeChildAnswer("not cbor at all", missing), tsctl::Error);

  // An error crosses with its kind and detail.
  tsctl::ChildOutcome raised;
  tsctl::DecodeChildAnswer(tsctl::EncodeChildError(tsctl::Error(tsctl::ErrorKind::kUsage, "no such argument 'k'", "trace")), raised);
  CHECK(raised.end == tsctl::ChildEnd::kRaised);
  CHECK(raised.error_kind == tsctl::ErrorKind::kUsage);
  CHECK(raised.error == "no such argument 'k'");
  CHECK(raised.error_detail == "trace");
}

TEST_CASE("a model-check child's progress names the candidate it tried, by index and flags", "[inputs]") {
  using tsctl::CandidateIndex;
  using tsctl::ProgressEvent;
  using tsctl::TriedCandidate;
  // Typed events cross the pipe through the codec and come back whole.
  const ProgressEvent trying{.kind = ProgressEvent::Kind::kTrying, .text = "--arg 'x=1x3:float32'", .done = 3};
  const std::optional<ProgressEvent> back = tsctl::DecodeProgress(tsctl::EncodeProgress(trying));
  REQUIRE(back);
  CHECK(TriedCandidate(back) == "--arg 'x=1x3:float32'");
  CHECK(CandidateIndex(back) == 3);
  const std::optional<ProgressEvent> loaded = ProgressEvent{.kind = ProgressEvent::Kind::kLoaded};
  CHECK(TriedCandidate(loaded).empty());
  CHECK(CandidateIndex(loaded) == -1);
  CHECK(CandidateIndex(std::nullopt) == -1);
  const ProgressEvent timing{.kind = ProgressEvent::Kind::kTiming, .done = 12, .total = 30, .seconds = true};
  const std::optional<ProgressEvent> t = tsctl::DecodeProgress(tsctl::EncodeProgress(timing));
  REQUIRE(t);
  CHECK((t->kind == ProgressEvent::Kind::kTiming && t->done == 12 && t->total == 30 && t->seconds));
  CHECK_FALSE(tsctl::DecodeProgress("trying 3 --arg x"));  // text is not an event
}

TEST_CASE("uniform fills take floating dtypes and print back the same", "[inputs]") {
  InputSpec s = tsctl::ParseInputSpec("2x3:float32:uniform:-1:1");
  CHECK(s.fill == InputSpec::Fill::kUniform);
  CHECK(s.low == -1);
  CHECK(s.high == 1);
  CHECK(s.ToString() == "2x3:float32:uniform:-1:1");
  CHECK_THROWS_AS(tsctl::ParseInputSpec("2x3:int64:uniform:0:1"), tsctl::Error);
  CHECK_THROWS_AS(tsctl::ParseInputSpec("2x3:float32:uniform:1:0"), tsctl::Error);
}

TEST_CASE("--val-range parses [NAME:]LOW,HIGH with or without brackets", "[inputs]") {
  auto r = tsctl::ParseValueRanges({"x:0,1", "[-2,2]", "mask:[0,5]"});
  REQUIRE(r.size() == 3);
  CHECK(r[0].name == "x");
  CHECK(r[0].low == 0);
  CHECK(r[0].high == 1);
  CHECK(r[1].name.empty());
  CHECK(r[1].low == -2);
  CHECK(r[2].name == "mask");
  CHECK(r[2].high == 5);
  for (const char* bad : {"x:1,0", "x:a,1", "x:1", "1x:0,1", "x:0,inf"}) {
    INFO(bad);
    CHECK_THROWS_AS(tsctl::ParseValueRanges({bad}), tsctl::Error);
  }
  CHECK_THROWS_AS(tsctl::ParseValueRanges({"x:0,1", "x:0,2"}), tsctl::Error);
  CHECK_THROWS_AS(tsctl::ParseValueRanges({"0,1", "[0,2]"}), tsctl::Error);
}

TEST_CASE("value ranges rewrite randomly filled tensor specs of the arguments they name", "[inputs]") {
  const std::vector<tsctl::FormalArg> formals = {{"x", true}, {"ids", true}, {"k", false}, {"pair", true}};
  const std::vector<ArgSpec> args = {{"", "1x3:float32"}, {"ids", "1x4:int64"}, {"k", "3"},
                                     {"pair", "[\"2:float32\", \"2:float32:zeros\"]"}};
  auto out = tsctl::ApplyValueRanges(args, formals, tsctl::ParseValueRanges({"x:0,1", "ids:[0.5,7]", "[-1,1]"}));
  REQUIRE(out.size() == 4);
  CHECK(out[0].value == "1x3:float32:uniform:0:1");
  CHECK(out[1].value == "1x4:int64:randint:1:8");  // 1 to 7 inclusive
  CHECK(out[2].value == "3");                      // not a tensor argument
  CHECK(out[3].value == "[\"2:float32:uniform:-1:1\",\"2:float32:zeros\"]");  // an explicit fill is kept
  // Positional arguments take the slots the named ones leave.
  auto pos = tsctl::ApplyValueRanges({{"x", "2:float32"}, {"", "2:int64"}}, formals, tsctl::ParseValueRanges({"ids:0,1"}));
  CHECK(pos[0].value == "2:float32");
  CHECK(pos[1].value == "2:int64:randint:0:2");
  CHECK_THROWS_AS(tsctl::ApplyValueRanges(args, formals, tsctl::ParseValueRanges({"y:0,1"})), tsctl::Error);
  CHECK_THROWS_AS(tsctl::ApplyValueRanges({{"ids", "2:int64"}}, formals, tsctl::ParseValueRanges({"ids:0.2,0.8"})), tsctl::Error);
  CHECK(tsctl::ApplyValueRanges(args, formals, {}).at(0).value == "1x3:float32");
}

TEST_CASE("a migrate result crosses the door whole, --bench figures included", "[inputs]") {
  // What the Python child answers and a migrate --jobs worker sends back.
  tsctl::MigrateResult r;
  r.path = "zoo/cnn\xff.pt";
  r.stage = tsctl::MigrateStage::kPackaged;
  r.verified = r.written = true;
  r.checks = {{"sample (1x3x8x8)", true, "", 2.5e-7, 1e-6, "", {{"output 0", 2.5e-7, 1e-6}}}};
  r.timings = {{"bench", 0.5}};
  r.bench = {{"torchscript", {1000, 3000, 2000}, 2000, 1, ""}, {"aoti", {}, 0, 0, "RuntimeError: no compiler"}};
  r.bench_warmup = tsctl::kMigrateBenchWarmup;
  tsctl::ChildOutcome back;
  tsctl::DecodeChildAnswer(tsctl::EncodeChildValue(r), back);
  REQUIRE(back.Answered());
  const auto& b = std::get<tsctl::MigrateResult>(back.value);
  CHECK(b.path == r.path);
  CHECK(b.stage == tsctl::MigrateStage::kPackaged);
  REQUIRE(b.bench.size() == 2);
  CHECK(b.bench[0].latencies_ns == std::vector<uint64_t>{1000, 3000, 2000});
  CHECK(b.bench[0].median_ns == 2000);
  CHECK(b.bench[1].error == "RuntimeError: no compiler");
  CHECK(b.bench_warmup == 3);
  CHECK(b.checks[0].outputs[0].max_abs == 2.5e-7);
}
