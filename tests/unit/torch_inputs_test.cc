// Tests of the LibTorch side of typed arguments and inferred inputs, on
// modules defined here: what BuildArguments makes of each spelling, which
// errors name the argument, and which candidates InferInputCandidates offers
// first. (End to end, with archives Python wrote, scripts/report_inputs.py.)
#include <ATen/CPUGeneratorImpl.h>
#include <torch/script.h>

#include <string>
#include <vector>

#include "arguments.h"
#include "infer_inputs.h"
#include "intermediates.h"
#include "tensors.h"
#include "tsctl/dtype.h"
#include "torch_util.h"
#include "tsctl/error.h"

// LibTorch 2.x's c10/util/Logging.h defines a glog-style CHECK(condition)
// that aborts; Catch's, included last, must be the one these tests use.
#undef CHECK
#include <catch2/catch.hpp>

namespace {

using tsctl::ArgSpec;

// A module whose forward is `source`, with parameter `w` if it is given.
torch::jit::Module Define(const std::string& source, const at::Tensor& w) {
  torch::jit::Module m("__torch__.M");
  if (w.defined()) m.register_parameter("w", w, false);
  m.define(source);
  return m;
}

torch::jit::Module Define(const std::string& source, bool conv_weight = false) {
  return Define(source, conv_weight ? torch::randn({8, 3, 3, 3}) : at::Tensor());
}

// The arguments of the first candidate InferInputCandidates offers for forward.
std::vector<ArgSpec> FirstCandidate(const torch::jit::Module& m) {
  auto candidates = tsctl::InferInputCandidates(m, m.get_method("forward"));
  REQUIRE_FALSE(candidates.empty());
  return candidates[0].args;
}

const c10::FunctionSchema& Schema(const torch::jit::Module& m) { return m.get_method("forward").function().getSchema(); }

// The text of a tsctl::Error thrown by `fn`, with its kind; "" if none.
template <typename Fn>
std::string ErrorOf(Fn fn, tsctl::ErrorKind* kind = nullptr) {
  try {
    fn();
  } catch (const tsctl::Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("BuildArguments types every value by the method's schema", "[torch][inputs]") {
  torch::jit::Module m = Define(R"(
def forward(self, x: Tensor, k: int, scale: float, flag: bool, name: str, sizes: List[int],
            feats: Dict[str, Tensor], maybe: Optional[Tensor], pair: Tuple[int, str]) -> int:
    return k
)");
  at::Generator gen = at::detail::createCPUGenerator(0);
  std::vector<c10::IValue> v = tsctl::BuildArguments(
      Schema(m),
      {{"x", "2x3:float32:ones"}, {"k", "3"}, {"scale", "0.5"}, {"flag", "true"}, {"name", "\"abc\""}, {"sizes", "[1, 2]"},
       {"feats", "{\"a\": \"1x2:float32\"}"}, {"maybe", "null"}, {"pair", "[7, \"b\"]"}},
      gen);
  REQUIRE(v.size() == 9);
  CHECK(v[0].isTensor());
  CHECK(v[0].toTensor().sizes() == at::IntArrayRef({2, 3}));
  CHECK(v[0].toTensor().sum().item<double>() == 6.0);
  CHECK(v[1].toInt() == 3);
  CHECK(v[2].toDouble() == 0.5);
  CHECK(v[3].toBool());
  CHECK(v[4].toStringRef() == "abc");
  // List[int], not List[Any]: a method typed List[int] accepts it.
  REQUIRE(v[5].isIntList());
  CHECK((v[5].toIntVector() == std::vector<int64_t>{1, 2}));
  REQUIRE(v[6].isGenericDict());
  CHECK(v[6].toGenericDict().keyType()->kind() == c10::TypeKind::StringType);
  CHECK(v[6].toGenericDict().at("a").toTensor().sizes() == at::IntArrayRef({1, 2}));
  CHECK(v[7].isNone());
  REQUIRE(v[8].isTuple());
  CHECK(v[8].toTupleRef().elements()[0].toInt() == 7);
  CHECK(v[8].toTupleRef().elements()[1].toStringRef() == "b");
  // And the method runs on them.
  CHECK(m.get_method("forward")(v).toInt() == 3);
}

TEST_CASE("BuildArguments: positions, defaults, and errors that name the argument", "[torch][inputs]") {
  torch::jit::Module m = Define(R"(
def forward(self, x: Tensor, k: int = 2) -> Tensor:
    return x * k
)");
  at::Generator gen = at::detail::createCPUGenerator(0);
  std::vector<c10::IValue> v = tsctl::BuildArguments(Schema(m), {{"", "1x4:float32"}}, gen);
  REQUIRE(v.size() == 2);
  CHECK(v[1].toInt() == 2);  // the schema's default

  tsctl::ErrorKind kind = tsctl::ErrorKind::kIo;
  std::string why = ErrorOf([&] { tsctl::BuildArguments(Schema(m), {{"x", "1x4:float32"}, {"k", "1.5"}}, gen); }, &kind);
  CHECK(kind == tsctl::ErrorKind::kUsage);
  CHECK(why.find("'k'") != std::string::npos);
  why = ErrorOf([&] { tsctl::BuildArguments(Schema(m), {{"nope", "1"}}, gen); }, &kind);
  CHECK(kind == tsctl::ErrorKind::kUsage);
  CHECK(why.find("nope") != std::string::npos);
  why = ErrorOf([&] { tsctl::BuildArguments(Schema(m), {{"", "1x4"}, {"", "2"}, {"", "3"}}, gen); }, &kind);
  CHECK(kind == tsctl::ErrorKind::kUsage);
  CHECK_FALSE(why.empty());
}

TEST_CASE("InferInputCandidates: a convolution's weight gives the channels", "[torch][inputs]") {
  torch::jit::Module m = Define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.conv2d(torch.relu(x), self.w)
)", /*conv_weight=*/true);
  auto candidates = tsctl::InferInputCandidates(m, m.get_method("forward"));
  REQUIRE_FALSE(candidates.empty());
  REQUIRE(candidates[0].args.size() == 1);
  CHECK(candidates[0].args[0].name == "x");
  CHECK(candidates[0].args[0].value == "1x3x224x224:float32");
  CHECK(candidates[0].note.find("w [8, 3, 3, 3]") != std::string::npos);
  CHECK(candidates.size() <= 12);
}

TEST_CASE("InferInputCandidates: a list of tensors gets images, or what its elements' consumers need", "[torch][inputs]") {
  SECTION("nothing in the graph pins the elements: one CHW image per element") {
    torch::jit::Module m = Define(R"(
def forward(self, images: List[Tensor]) -> Tensor:
    return images[0].sum()
)");
    auto candidates = tsctl::InferInputCandidates(m, m.get_method("forward"));
    REQUIRE_FALSE(candidates.empty());
    CHECK(candidates[0].args[0].value == "[\"3x224x224:float32\"]");
    CHECK(candidates[0].note.find("an image (C, H, W)") != std::string::npos);
  }
  SECTION("an element feeds a convolution") {
    torch::jit::Module m = Define(R"(
def forward(self, images: List[Tensor]) -> Tensor:
    return torch.conv2d(images[0], self.w)
)", /*conv_weight=*/true);
    auto candidates = tsctl::InferInputCandidates(m, m.get_method("forward"));
    REQUIRE_FALSE(candidates.empty());
    CHECK(candidates[0].args[0].value == "[\"1x3x224x224:float32\"]");
    CHECK(candidates[0].note.find("w [8, 3, 3, 3]") != std::string::npos);
  }
}

TEST_CASE("InferInputCandidates: plain values for non-tensor arguments, defaults left alone", "[torch][inputs]") {
  torch::jit::Module m = Define(R"(
def forward(self, n: int, words: List[str], scale: float = 2.0) -> int:
    return n + len(words)
)");
  auto candidates = tsctl::InferInputCandidates(m, m.get_method("forward"));
  REQUIRE_FALSE(candidates.empty());
  REQUIRE(candidates[0].args.size() == 2);  // scale has a default
  CHECK(candidates[0].args[0].value == "1");
  CHECK(candidates[0].args[1].value == "[\"\"]");
  at::Generator gen = at::detail::createCPUGenerator(0);
  CHECK(m.get_method("forward")(tsctl::BuildArguments(Schema(m), candidates[0].args, gen)).toInt() == 2);
}

TEST_CASE("InferInputCandidates: the method's own checks before it raises", "[torch][inputs]") {
  SECTION("a rank bound, a length chosen by an int, and the int's compared constant") {
    torch::jit::Module m = Define(R"(
def forward(self, x: Tensor, sr: int) -> Tensor:
    if x.dim() == 1:
        x = x.unsqueeze(0)
    assert x.dim() <= 2, "too many dimensions"
    if sr != 16000:
        assert False, "rate"
    n = 512 if sr == 16000 else 256
    if x.size(-1) != n:
        assert False, "samples"
    return x.sum()
)");
    auto candidates = tsctl::InferInputCandidates(m, m.get_method("forward"));
    REQUIRE_FALSE(candidates.empty());
    REQUIRE(candidates[0].args.size() == 2);
    CHECK(candidates[0].args[0].value == "1x512:float32");
    CHECK(candidates[0].args[1].value == "16000");
    CHECK(candidates[0].note.find("from the method's checks") != std::string::npos);
    CHECK(candidates[0].note.find("sr 16000, a constant the method compares it with") != std::string::npos);
    at::Generator gen = at::detail::createCPUGenerator(0);
    CHECK_NOTHROW(m.get_method("forward")(tsctl::BuildArguments(Schema(m), candidates[0].args, gen)));
  }
  SECTION("an int looked up in a list the module holds") {
    torch::jit::Module m("__torch__.M");
    c10::List<int64_t> rates({8000, 16000});
    m.register_attribute("rates", c10::ListType::ofInts(), rates);
    m.define(R"(
def forward(self, sr: int) -> int:
    assert sr in self.rates, "rate"
    return sr
)");
    CHECK(FirstCandidate(m)[0].value == "8000");
  }
  SECTION("an exact rank") {
    torch::jit::Module m = Define(R"(
def forward(self, x: Tensor) -> Tensor:
    if x.dim() != 3:
        assert False, "want N, C, L"
    return x.sum()
)");
    CHECK(FirstCandidate(m)[0].value == "1x224x224:float32");
  }
}

TEST_CASE("InferInputCandidates: slices, matrix-vector products, computed views", "[torch][inputs]") {
  SECTION("the smallest shape whose constant slices are whole") {
    torch::jit::Module m = Define(R"(
def forward(self, x: Tensor) -> Tensor:
    a = x[:, 1:4, 0:3]
    b = x[:, 0:3, -2:]
    return torch.cat([a.flatten(), b.flatten()])
)");
    CHECK(FirstCandidate(m)[0].value == "1x4x3:float32");
  }
  SECTION("a vector as long as the matrix is wide") {
    torch::jit::Module m = Define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.mv(self.w, x)
)", torch::randn({2, 6}));
    CHECK(FirstCandidate(m)[0].value == "6:float32");
  }
  SECTION("a view to sizes computed from the input is followed") {
    torch::jit::Module m = Define(R"(
def forward(self, x: Tensor) -> Tensor:
    y = x.view(x.size())
    return torch.conv1d(y, self.w)
)", torch::randn({4, 2, 3}));
    CHECK(FirstCandidate(m)[0].value == "1x2x16000:float32");
  }
}

TEST_CASE("Intermediates: recorded in graph order, matched by position or debug name, first divergence named",
          "[torch][intermediates]") {
  auto module = [](const std::string& body, double w) { return Define(body, torch::full({4}, w)); };
  const std::string source = R"(
def forward(self, x: Tensor) -> Tensor:
    a = x + 1
    b = a * self.w
    y = torch.relu(b)
    return y
)";
  std::vector<c10::IValue> inputs = {torch::ones({2, 4})};
  std::string note;
  auto base = tsctl::RecordIntermediates(module(source, 2.0), "forward", inputs, torch::kCPU, uint64_t{1} << 30, note);
  REQUIRE(base.size() == 3);  // a, b, relu: the weight (GetAttr) and constants are left out
  CHECK(base[0].kind == "aten::add");
  CHECK(base[1].kind == "aten::mul");
  // Round trip through the recording's form.
  base = tsctl::UnpackIntermediates(tsctl::PackIntermediates(base));
  REQUIRE(base.size() == 3);
  tsctl::Tolerances tol;

  SECTION("the same graph and weights: all match, by position") {
    auto same = tsctl::RecordIntermediates(module(source, 2.0), "forward", inputs, torch::kCPU, uint64_t{1} << 30, note);
    tsctl::IntermediatesResult r = tsctl::CompareIntermediates(same, base, tol);
    CHECK(r.compared);
    CHECK(r.matched_by == "position");
    CHECK(r.values == 3);
    CHECK(r.first_divergence == -1);
  }
  SECTION("another weight: the product is the first value that differs") {
    auto other = tsctl::RecordIntermediates(module(source, 3.0), "forward", inputs, torch::kCPU, uint64_t{1} << 30, note);
    tsctl::IntermediatesResult r = tsctl::CompareIntermediates(other, base, tol);
    CHECK(r.first_divergence == 1);
    CHECK(r.node.find("aten::mul") != std::string::npos);
    CHECK(r.detail.find("max abs difference 2") != std::string::npos);
  }
  SECTION("the same values computed in another order: matched by debug name") {
    const std::string first = R"(
def forward(self, x: Tensor) -> Tensor:
    a = x + 1
    n = torch.neg(x)
    m = a * self.w
    y = m + n
    return y
)";
    const std::string second = R"(
def forward(self, x: Tensor) -> Tensor:
    n = torch.neg(x)
    a = x + 1
    m = a * self.w
    y = m + n
    return y
)";
    auto one = tsctl::RecordIntermediates(module(first, 2.0), "forward", inputs, torch::kCPU, uint64_t{1} << 30, note);
    auto two = tsctl::RecordIntermediates(module(second, 2.0), "forward", inputs, torch::kCPU, uint64_t{1} << 30, note);
    REQUIRE(one.size() == 4);
    tsctl::IntermediatesResult r = tsctl::CompareIntermediates(one, two, tol);
    CHECK(r.compared);
    CHECK(r.matched_by == "debug name");
    CHECK(r.values == 4);
    CHECK(r.first_divergence == -1);
  }
  SECTION("graphs that part: the values before are compared, and the note says where") {
    auto longer = tsctl::RecordIntermediates(module(R"(
def forward(self, x: Tensor) -> Tensor:
    a = x + 1
    b = a * self.w
    c = torch.relu(b)
    return torch.sigmoid(c)
)", 2.0), "forward", inputs, torch::kCPU, uint64_t{1} << 30, note);
    for (auto& v : longer) v.name += "_renamed";  // no match by name
    tsctl::IntermediatesResult r = tsctl::CompareIntermediates(longer, base, tol);
    CHECK(r.compared);
    CHECK(r.partial);
    CHECK(r.values == 3);
    CHECK(r.note.find("the graphs part at value 4 (aten::sigmoid here, none in the reference model") != std::string::npos);
  }
  SECTION("random numbers drawn alike in both runs; uninitialized memory left out") {
    const std::string noisy = R"(
def forward(self, x: Tensor) -> Tensor:
    r = torch.rand([2, 4])
    e = torch.empty([2, 4])
    y = x + r * self.w
    return y
)";
    auto one = tsctl::RecordIntermediates(module(noisy, 2.0), "forward", inputs, torch::kCPU, uint64_t{1} << 30, note);
    auto two = tsctl::RecordIntermediates(module(noisy, 2.0), "forward", inputs, torch::kCPU, uint64_t{1} << 30, note);
    for (const auto& v : one) CHECK(v.kind != "aten::empty");
    tsctl::IntermediatesResult r = tsctl::CompareIntermediates(one, two, tol);
    CHECK(r.compared);
    CHECK(r.values == static_cast<int64_t>(one.size()));
    CHECK(r.first_divergence == -1);
  }
  SECTION("a byte budget leaves the rest out and says so") {
    auto few = tsctl::RecordIntermediates(module(source, 2.0), "forward", inputs, torch::kCPU, 40, note);
    CHECK(few.size() == 1);
    CHECK(note.find("left out") != std::string::npos);
  }
}

TEST_CASE("tsctl/dtype.h's rows are this LibTorch's ScalarTypes, by value and name", "[torch][inputs]") {
  // Every ScalarType this LibTorch has is the row of its value, with c10's name
  // (Undefined, before NumOptions, is none: 1.13's is value 18, 2.x's later).
  for (int v = 0; v < static_cast<int>(at::ScalarType::NumOptions); ++v) {
    const auto type = static_cast<at::ScalarType>(v);
    if (type == at::ScalarType::Undefined) continue;
    const tsctl::DtypeInfo* row = tsctl::DtypeByValue(v);
    INFO(c10::toString(type));
    // A newer LibTorch may have types past tsctl's list (2.15: BComplex32):
    // they have no row, and AtScalarType never yields them.
    if (!row) {
      CHECK(v >= static_cast<int>(tsctl::AllDtypes().size()));
      continue;
    }
    CHECK(std::string(row->c10) == c10::toString(type));
    CHECK(tsctl::AtScalarType(row) == type);
    if (!c10::isQIntType(type) && type != at::ScalarType::QUInt4x2 && type != at::ScalarType::QUInt2x4) {
      CHECK(row->size == c10::elementSize(type));
    }
  }
  // Every input dtype is one LibTorch makes; rows past this LibTorch's list are Undefined.
  for (const tsctl::DtypeInfo& d : tsctl::AllDtypes()) {
    if (d.input) CHECK(tsctl::ScalarTypeOf(d.name) == tsctl::AtScalarType(&d));
    if (tsctl::DtypeValue(d) >= static_cast<int>(at::ScalarType::Undefined)) {
      CHECK(tsctl::AtScalarType(&d) == at::ScalarType::Undefined);
    }
  }
  CHECK_THROWS_AS(tsctl::ScalarTypeOf("complex64"), tsctl::Error);
  CHECK_THROWS_AS(tsctl::ScalarTypeOf("qint8"), tsctl::Error);
}

TEST_CASE("UseQuantizedEngine: by name, and a usage error naming the engines there are", "[torch][inputs]") {
  tsctl::ErrorKind kind = tsctl::ErrorKind::kIo;
  std::string why = tsctl::QuantizedEngines();
  REQUIRE_FALSE(why.empty());
  std::string first = why.substr(0, why.find(','));
  tsctl::UseQuantizedEngine(first);
  CHECK(c10::toString(at::globalContext().qEngine()) != std::string("NoQEngine"));
  std::string err = ErrorOf([] { tsctl::UseQuantizedEngine("no-such-engine"); }, &kind);
  CHECK(kind == tsctl::ErrorKind::kUsage);
  CHECK(err.find("no-such-engine") != std::string::npos);
  CHECK(err.find(first) != std::string::npos);
  tsctl::UseQuantizedEngine("");  // keeps the current one
}
