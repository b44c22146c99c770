// Arguments typed by a schema, values from Python's files, recursive
// comparison and inferred inputs.
#include <catch2/catch.hpp>
#include <torch/script.h>

#include "arguments.h"
#include "compare_values.h"
#include "infer_inputs.h"
#include "py_values.h"
#include "test_util.h"
#include "tsctl/error.h"

using tsctl::test::TestData;

namespace {

torch::jit::Module Load(const std::string& name) {
  torch::jit::Module m = torch::jit::load(TestData(name));
  m.eval();
  return m;
}

c10::IValue Value(const char* type, const std::string& text) {
  at::Generator gen = at::detail::createCPUGenerator(0);
  return tsctl::ArgumentValue(c10::parseType(type), text, "'a'", gen);
}

}  // namespace

TEST_CASE("argument spellings become values of the schema's type", "[torch][args]") {
  CHECK(Value("int", "3").toInt() == 3);
  CHECK(Value("float", "0.5").toDouble() == 0.5);
  CHECK(Value("float", "2").toDouble() == 2.0);
  CHECK(Value("bool", "true").toBool());
  CHECK(Value("str", "abc").toStringRef() == "abc");
  CHECK(Value("str", "\"a b\"").toStringRef() == "a b");
  CHECK(Value("Optional[Tensor]", "null").isNone());
  c10::IValue list = Value("List[int]", "[1, 2]");
  CHECK(list.type()->annotation_str() == "List[int]");
  c10::IValue dict = Value("Dict[str, List[int]]", "{\"a\": [1, 2]}");
  CHECK(dict.type()->annotation_str() == "Dict[str, List[int]]");
  CHECK(Value("Dict[int, float]", "{\"1\": 0.5}").toGenericDict().at(1).toDouble() == 0.5);
  c10::IValue t = Value("Tensor", "2x3:int64:randint:5:6");
  CHECK(t.toTensor().sizes() == c10::IntArrayRef({2, 3}));
  CHECK(t.toTensor().min().item<int64_t>() == 5);
  CHECK(Value("Tensor", "[[1.5, 2], [3, 4]]").toTensor().scalar_type() == at::kFloat);
  CHECK(Value("Tensor", "2x2:float32:fill:0.5").toTensor().sum().item<double>() == 2.0);
  c10::IValue tup = Value("Tuple[Tensor, int]", "[\"2:float32:ones\", 2]");
  CHECK(tup.toTupleRef().elements()[1].toInt() == 2);
}

TEST_CASE("values that do not fit are usage errors naming the argument and type", "[torch][args]") {
  for (auto [type, text] : std::vector<std::pair<const char*, const char*>>{
           {"int", "1.5"}, {"bool", "1"}, {"List[int]", "[1, \"x\"]"}, {"Tuple[int, int]", "[1]"},
           {"Dict[str, Tensor]", "[1]"}, {"Tensor", "2xq:float32"}, {"Tensor", "[[1], [2, 3]]"}}) {
    try {
      Value(type, text);
      FAIL(type << " accepted " << text);
    } catch (const tsctl::Error& e) {
      CHECK(e.kind() == tsctl::ErrorKind::kUsage);
      CHECK(std::string(e.what()).find("'a'") != std::string::npos);
      CHECK(std::string(e.what()).find(c10::parseType(type)->annotation_str()) != std::string::npos);
    }
  }
}

TEST_CASE("a wrong argument count says what the method takes", "[torch][args]") {
  torch::jit::Module m = Load("scripted_multi.pt");
  const auto& schema = m.get_method("forward").function().getSchema();
  at::Generator gen = at::detail::createCPUGenerator(0);
  try {
    tsctl::BuildArguments(schema, {{"", "2x3:float32"}, {"", "2"}, {"", "3"}}, gen);
    FAIL("three arguments accepted");
  } catch (const tsctl::Error& e) {
    CHECK(e.kind() == tsctl::ErrorKind::kUsage);
    CHECK(std::string(e.what()).find("forward takes 1 to 2 arguments (x: Tensor, steps: int = 2)") != std::string::npos);
  }
  CHECK_THROWS_AS(tsctl::BuildArguments(schema, {}, gen), tsctl::Error);
  CHECK_THROWS_AS(tsctl::BuildArguments(schema, {{"nope", "1"}}, gen), tsctl::Error);
  auto values = tsctl::BuildArguments(schema, {{"steps", "4"}, {"", "2x3:float32"}}, gen);
  REQUIRE(values.size() == 2);
  CHECK(values[1].toInt() == 4);
}

TEST_CASE("torch.save files from Python load with every type, typed by the schema", "[torch][files]") {
  torch::jit::Module m = Load("args/all_args.pt");
  torch::jit::Method method = m.get_method("forward");
  std::vector<c10::IValue> inputs = tsctl::ArgumentList(tsctl::LoadValueFile(TestData("args/all_args.inputs.pt")));
  REQUIRE(inputs.size() == 11);
  const auto& formal = method.function().getSchema().arguments();
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = tsctl::Retype(formal[i + 1].type(), inputs[i]);
  c10::IValue got = method(inputs);
  c10::IValue want = tsctl::LoadValueFile(TestData("args/all_args.expected.pt"));
  std::vector<tsctl::ReferenceLeaf> leaves;
  tsctl::CompareValues(got, want, "outputs", {}, leaves);
  CHECK(leaves.size() == 6);
  for (const auto& l : leaves) CHECK((l.pass && l.compared));
}

TEST_CASE("a mismatch names its path", "[torch][compare]") {
  c10::IValue want = tsctl::LoadValueFile(TestData("args/all_args.perturbed.pt")).toGenericDict().at("outputs");
  c10::IValue got = tsctl::LoadValueFile(TestData("args/all_args.expected.pt"));
  std::vector<tsctl::ReferenceLeaf> leaves;
  tsctl::CompareValues(got, want, "outputs", {}, leaves);
  std::vector<std::string> failed;
  for (const auto& l : leaves) {
    if (!l.pass) failed.push_back(l.name);
  }
  CHECK(failed == std::vector<std::string>{"outputs[1][\"scores\"]", "outputs[3]"});
}

TEST_CASE(".npy and .npz arrays load as tensors", "[torch][files]") {
  at::Tensor a = tsctl::LoadValueFile(TestData("args/flat.inputs.npy")).toTensor();
  CHECK(a.sizes() == c10::IntArrayRef({1, 1, 28, 28}));
  c10::IValue z = tsctl::LoadValueFile(TestData("args/flat.inputs.npz"));
  REQUIRE(z.isTuple());
  CHECK(torch::equal(z.toTupleRef().elements()[0].toTensor(), a));
}

TEST_CASE("inputs are inferred from the first operators' weights", "[torch][infer]") {
  struct Case {
    const char* archive;
    const char* first;
    const char* note;
  };
  for (const Case& c : {Case{"traced_cnn.pt", "x=1x3x224x224:float32", "conv"}, Case{"args/embed.pt", "tokens=1x16:int64:randint:0:50", "emb.weight [50, 8]"},
                        Case{"args/recurrent.pt", "seq=1x16x12:float32", "weight_ih_l0"},
                        Case{"args/flat.pt", "img=1x784:float32", "view"}}) {
    torch::jit::Module m = Load(c.archive);
    torch::jit::Method method = m.get_method("forward");
    auto candidates = tsctl::InferInputCandidates(m, method);
    REQUIRE(!candidates.empty());
    CHECK(tsctl::DescribeArgs(candidates[0].args) == c.first);
    CHECK(candidates[0].note.find(c.note) != std::string::npos);
    at::Generator gen = at::detail::createCPUGenerator(0);
    CHECK_NOTHROW(method(tsctl::BuildArguments(method.function().getSchema(), candidates[0].args, gen)));
  }
}
