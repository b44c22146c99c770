// .pt2 archives without LibTorch: recognition of each layout and of damage,
// the program's facts, the printed graph against Python's, and hostile JSON.
#include <catch2/catch.hpp>

#include "test_util.h"
#include "tsctl/error.h"
#include "tsctl/inspect.h"
#include "tsctl/pt2.h"
#include "../../lib/src/archive/pt2_machine.h"
#include "tsctl/validate.h"
#include "tsctl/zip_writer.h"

using namespace tsctl;

namespace {

// A ZIP of stored records, in memory.
std::unique_ptr<ByteSource> Zip(const std::vector<std::pair<std::string, std::string>>& records) {
  ZipWriter w(0);
  for (const auto& [name, data] : records) w.WriteRecord(name, data);
  ZipTail t = w.WriteEndOfFile(false, "");
  return MakeMemorySource(t.records + t.central + t.end, "test.pt2");
}

Archive OpenPt2(const std::string& name) { return Archive::OpenModel(OpenFileSource(test::TestData("pt2/" + name))); }

const char* kTinyProgram = R"({"graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "x"}}],
  "outputs": [{"as_tensor": {"name": "relu"}}],
  "nodes": [{"target": "torch.ops.aten.relu.default", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1}],
             "outputs": [{"as_tensor": {"name": "relu"}}], "metadata": {}}],
  "tensor_values": {"x": {"dtype": 7, "sizes": [{"as_int": 2}], "requires_grad": false, "device": {"type": "cpu"},
                          "strides": [{"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7}},
  "sym_int_values": {}, "sym_bool_values": {}},
  "signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
                "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "relu"}}}}]},
  "module_call_graph": []},
  "opset_version": {}, "range_constraints": {}, "schema_version": {"major": 8, "minor": 20}, "torch_version": "2.15.0"})";

}  // namespace

TEST_CASE("pt2: each layout is recognised, and told from damage", "[pt2]") {
  CHECK(Archive::OpenAny(Zip({{"m/archive_format", "pt2"}, {"m/archive_version", "0"}, {"m/models/model.json", kTinyProgram}}))
            .kind() == ArchiveKind::kPt2);
  // AOTInductor packages, with and without a top folder.
  CHECK(Archive::OpenAny(Zip({{"p/archive_format", "pt2"}, {"p/data/aotinductor/model/a.wrapper.so", "ELF"}})).kind() ==
        ArchiveKind::kPt2Aoti);
  Archive bare = Archive::OpenAny(Zip({{"data/aotinductor/model/a.wrapper.so", "ELF"},
                                       {"data/aotinductor/model/a_metadata.json", R"({"AOTI_DEVICE_KEY": "cpu"})"}}));
  CHECK(bare.kind() == ArchiveKind::kPt2Aoti);
  CHECK(bare.root().empty());
  Archive nested = Archive::OpenAny(Zip({{"pkg/data/aotinductor/model/a.wrapper.so", "ELF"}}));
  CHECK(nested.kind() == ArchiveKind::kPt2Aoti);
  CHECK(nested.root() == "pkg");
  CHECK(Archive::OpenAny(Zip({{"serialized_exported_program.json", kTinyProgram}, {"version", "1"}})).kind() ==
        ArchiveKind::kPt2Early);
  // archive_format pt2 with nothing to read: damage, not some other ZIP.
  CHECK(Archive::OpenAny(Zip({{"m/archive_format", "pt2"}, {"m/.data/version", "1"}})).kind() == ArchiveKind::kDamagedPt2);
  CHECK(Archive::OpenAny(Zip({{"m/archive_format", "zip"}, {"m/models/model.json", "{}"}})).kind() == ArchiveKind::kOtherZip);
  CHECK(OpenPt2("cnn.pt2").kind() == ArchiveKind::kPt2);
  CHECK(OpenPt2("cnn.pt2").root() == "cnn");
}

TEST_CASE("pt2: no top folder is a note that torch.export.load accepts, not an ambiguity", "[pt2]") {
  // The flat layout (torch.export.load reads it with Python's zipfile after
  // its archive reader refuses it) and a package whose first entry is in no
  // folder: a layout note each; validate warns, never fails.
  for (const Archive& a :
       {Archive::OpenAny(Zip({{"serialized_exported_program.json", kTinyProgram}, {"version", "1"}})),
        Archive::OpenAny(Zip({{"version", "1"}, {"data/aotinductor/model/a.wrapper.so", "ELF"}}))}) {
    INFO(ArchiveKindName(a.kind()));
    CHECK(IsPt2(a.kind()));
    CHECK(a.Ambiguities().empty());
    REQUIRE(a.LayoutNotes().size() == 1);
    CHECK_THAT(a.LayoutNotes()[0], Catch::StartsWith("no top folder: torch.export.load's archive reader refuses it"));
  }
  // A TorchScript archive without a top folder: LibTorch refuses it, an ambiguity.
  Archive ts = Archive::OpenAny(Zip({{"data.pkl", "x"}, {"code/a.py", "x"}}));
  CHECK(ts.LayoutNotes().empty());
  REQUIRE_FALSE(ts.Ambiguities().empty());
  CHECK_THAT(ts.Ambiguities()[0], Catch::Contains("is in no folder: LibTorch refuses the archive"));
  // With a top folder: neither.
  CHECK(OpenPt2("cnn.pt2").LayoutNotes().empty());
}

TEST_CASE("pt2: commands that run archives say a .pt2 needs the LibTorch 2.x build", "[pt2]") {
  try {
    Archive::Open(OpenFileSource(test::TestData("pt2/cnn.pt2")));
    FAIL("opened a .pt2 as TorchScript");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUnavailable);
    CHECK(std::string(e.what()).find("needs a LibTorch 2.x build") != std::string::npos);
  }
  try {
    Archive::OpenModel(Zip({{"m/archive_format", "pt2"}}));
    FAIL("opened a damaged .pt2");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kFormat);
    CHECK(std::string(e.what()).rfind("damaged .pt2 archive", 0) == 0);
  }
}

TEST_CASE("pt2: signature, symbols and weights from the JSON alone", "[pt2]") {
  Pt2Info info = ReadPt2(OpenPt2("two_input.pt2"));
  CHECK(info.layout == "exported-program");
  CHECK(info.archive_format == "pt2");
  CHECK(info.archive_version == "0");
  REQUIRE(info.models.size() == 1);
  const Pt2Model& m = info.models[0];
  CHECK(m.name == "model");
  CHECK(m.schema_major == 8);
  CHECK(m.torch_version.rfind("2.15", 0) == 0);
  REQUIRE(m.inputs.size() == 2);
  CHECK(m.inputs[0].name == "x");
  CHECK(m.inputs[0].dtype == "float32");
  REQUIRE(m.inputs[0].shape.size() == 2);
  CHECK(m.inputs[1].dtype == "int64");
  // The batch size is one symbol with its range, shared by both inputs.
  REQUIRE(m.symbols.size() == 1);
  CHECK(m.inputs[0].shape[0] == m.symbols[0].name);
  CHECK(m.inputs[1].shape[0] == m.symbols[0].name);
  CHECK(m.inputs[0].shape[1] == "6");
  CHECK(m.symbols[0].min == 1);
  CHECK(m.symbols[0].max == 64);
  CHECK(m.outputs.size() == 2);
  REQUIRE(m.tensors.size() == 4);
  CHECK(m.tensors[0].name == "embed.weight");
  CHECK(m.tensors[0].role == "parameter");
  CHECK(m.tensors[0].shape == std::vector<int64_t>{10, 6});
  CHECK(m.tensors[0].bytes == 240);
  CHECK(m.tensors[0].file == "data/weights/weight_0");
  CHECK(m.tensors[0].file_present);
  CHECK(m.tensors[0].file_size == 240);
  CHECK(m.tensors[3].name == "scale");
  CHECK(m.tensors[3].role == "buffer");
  CHECK(m.nodes == 6);
  CHECK(m.sample_inputs == "data/sample_inputs/model.pt");
  // The saved (args, kwargs), read with tsctl's own pickle reader.
  CHECK(m.sample_inputs_error.empty());
  REQUIRE(m.sample_tensors.size() == 2);
  CHECK(m.sample_tensors[0].path == "args[0]");
  CHECK(m.sample_tensors[0].dtype == "float32");
  CHECK(m.sample_tensors[0].shape == std::vector<int64_t>{4, 6});
  CHECK(m.sample_tensors[1].path == "args[1]");
  CHECK(m.sample_tensors[1].dtype == "int64");
  CHECK(m.sample_tensors[1].shape == std::vector<int64_t>{4});
  CHECK(info.warnings.empty());
}

TEST_CASE("pt2: inspect fills operators and totals from the program", "[pt2]") {
  ArchiveInfo info = Inspect(OpenPt2("cnn.pt2"));
  CHECK(info.kind == "pt2");
  REQUIRE(info.pt2);
  CHECK(info.operators.totals_source == "program");
  bool conv = false;
  for (const OperatorUse& u : info.operators.totals) conv |= u.name == "aten::conv2d.default" && u.count == 1;
  CHECK(conv);
  uint64_t sum = 0;
  for (const TotalInfo& t : info.totals) sum += t.bytes;
  CHECK(sum == info.tensor_bytes);
  CHECK(info.tensor_bytes > 0);
  REQUIRE(info.extra.size() == 1);
  CHECK(info.extra[0].name == "producer.json");
}

TEST_CASE("pt2: the graph prints as Python's print(ep.graph)", "[pt2]") {
  for (const char* name : {"cnn", "cnn_weight", "two_input", "transformer"}) {
    INFO(name);
    std::string want = test::Slurp(test::TestData(std::string("pt2/golden/") + name + ".graph.txt"));
    REQUIRE(!want.empty());
    CHECK(Pt2GraphText(OpenPt2(std::string(name) + ".pt2"), "") == want);
  }
  CHECK(Pt2GraphText(Archive::OpenModel(Zip({{"m/archive_format", "pt2"}, {"m/models/model.json", kTinyProgram}})), "") ==
        "graph():\n    %x : [num_users=1] = placeholder[target=x]\n"
        "    %relu : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})\n"
        "    return (relu,)\n");
}

TEST_CASE("pt2: malformed or hostile program JSON is one error, never a crash", "[pt2]") {
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  for (const std::string& bad : {std::string("{"), deep, std::string("[1, 2]"), std::string(R"({"graph_module": 5})"),
                                 std::string(R"({"graph_module": {"graph": {"nodes": [5, {"inputs": 7}], "inputs": [1]}}})")}) {
    Archive a = Archive::OpenModel(Zip({{"m/archive_format", "pt2"}, {"m/models/model.json", bad}}));
    Pt2Info info = ReadPt2(a);  // never throws for damage inside
    if (bad.size() < 40 || bad == deep) {
      CHECK(info.models.empty());
      CHECK(info.warnings.size() == 1);
    }
    try {
      std::string text = Pt2GraphText(a, "");
      CHECK(text.rfind("graph():", 0) == 0);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kFormat);
      CHECK(std::string(e.what()).rfind("models/model.json: ", 0) == 0);
    }
  }
  try {
    Pt2GraphText(OpenPt2("cnn.pt2"), "nope");
    FAIL("printed an unknown model");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    CHECK(std::string(e.what()) == "no model 'nope' in the .pt2 archive (models: model)");
  }
}

TEST_CASE("pt2: validate --no-load checks every weight's file and size", "[pt2]") {
  auto config = [](const std::string& sizes) {
    return R"({"config": {"w": {"path_name": "weight_0", "is_param": true, "tensor_meta": {"dtype": 7, "sizes": [)" + sizes +
           R"(], "strides": [{"as_int": 1}], "storage_offset": {"as_int": 0}, "device": {"type": "cpu"}}}}})";
  };
  auto status = [&](const std::string& sizes, const std::string& bytes) {
    ValidateOptions options;
    options.load = false;
    ArchiveReport r = ValidateSource(Zip({{"m/archive_format", "pt2"}, {"m/archive_version", "0"},
                                          {"m/models/model.json", kTinyProgram},
                                          {"m/data/weights/model_weights_config.json", config(sizes)},
                                          {"m/data/weights/weight_0", bytes}}),
                                     "m.pt2", options);
    for (const CheckResult& c : r.checks) {
      if (c.id == "pt2.weights") return c.status;
    }
    return CheckStatus::kSkip;
  };
  CHECK(status(R"({"as_int": 2})", "12345678") == CheckStatus::kPass);
  CHECK(status(R"({"as_int": 3})", "12345678") == CheckStatus::kFail);  // 12 bytes needed, 8 stored
  // 2^62 elements of 4 bytes: the product wraps to 0 in 64 bits; must not pass.
  CHECK(status(R"({"as_int": 4611686018427387904})", "12345678") == CheckStatus::kFail);
}

TEST_CASE("pt2: the instruction sets an AOTInductor package needs, against a CPU's flags", "[pt2]") {
  const std::string isa = "AVX512 AVX512_VNNI AMX_TILE";
  CHECK(Pt2MissingCpuFeatures(isa, "fpu avx2 avx512f avx512bw avx512vl avx512dq avx512_vnni amx_tile").empty());
  CHECK(Pt2MissingCpuFeatures(isa, "fpu avx2 avx512f avx512bw avx512vl avx512dq") ==
        std::vector<std::string>{"AVX512_VNNI", "AMX_TILE"});
  CHECK(Pt2MissingCpuFeatures(isa, "fpu avx2") == std::vector<std::string>{"AVX512", "AVX512_VNNI", "AMX_TILE"});
  CHECK(Pt2MissingCpuFeatures("VSX NEON", "fpu").empty());  // other architectures: not judged
}

TEST_CASE("pt2: inputs read from an AOTInductor wrapper's input checks", "[pt2]") {
  // As inductor generates them (torch 2.15): a float batch with a dynamic
  // first size in [2, 64] and an int64 vector of the same size.
  const std::string source = R"(
AOTI_NOINLINE static void check_input_0(
    AtenTensorHandle* input_handles
) {
    int32_t arg4_1_expected_dtype = aoti_torch_dtype_float32();
    if (arg4_1_size[0] < 2) {
        ss << "input_handles[0]: dim value is too small at 0, "
           << "expected it to be >= 2, " << "but got: "
    }
    if (arg4_1_size[0] > 64) {
        ss << "input_handles[0]: dim value is too large at 0, "
           << "expected to be <= 64, " << "but got: "
    }
    if (6 != arg4_1_size[1]) {
        ss << "input_handles[0]: unmatched dim value at 1, "
           << "expected: 6, " << "but got: " << arg4_1_size[1]
    }
    if (6 != arg4_1_stride[0]) {
        ss << "input_handles[0]: unmatched stride value at 0, "
    }
    if (1 != arg4_1_stride[1]) {
        ss << "input_handles[0]: unmatched stride value at 1, "
    }
}
AOTI_NOINLINE static void check_input_1(
    AtenTensorHandle* input_handles
) {
    int32_t arg5_1_expected_dtype = aoti_torch_dtype_int64();
    if (arg5_1_size[0] < 2) {
        ss << "input_handles[1]: dim value is too small at 0, "
           << "expected it to be >= 2, " << "but got: "
    }
    if (1 != arg5_1_stride[0]) {
        ss << "input_handles[1]: unmatched stride value at 0, "
    }
}
AOTI_NOINLINE static void check_input_2(
    AtenTensorHandle* input_handles
) {
    int32_t arg6_1_expected_dtype = aoti_torch_dtype_bool();
}
AOTI_NOINLINE static void __check_inputs_outputs(
)";
  CHECK(AotiInputSpecs(source) == std::vector<std::string>{"2x6:float32", "2:int64", "scalar:bool"});
  CHECK(AotiInputSpecs("no checks here").empty());
  // A dtype tsctl cannot make: nothing is guessed rather than a wrong guess.
  CHECK(AotiInputSpecs("static void check_input_0(\n x_expected_dtype = aoti_torch_dtype_complex64();\n__check_inputs_outputs").empty());
  // Out of order: not the layout this reader knows.
  CHECK(AotiInputSpecs("static void check_input_1(\n x_expected_dtype = aoti_torch_dtype_float32();\n").empty());
}

TEST_CASE("pt2: what running an archive needs, from the archive", "[pt2]") {
  {
    Archive a = OpenPt2("cnn_aoti_stub.pt2");
    Pt2RunSpec s = Pt2RunSpecOf(a, ReadPt2(a));
    CHECK(s.kind == Pt2RunSpec::Kind::kAoti);
    CHECK(s.model == "model");
    REQUIRE(s.guess.size() == 1);
    CHECK(s.guess[0].value == "1x3x8x8:float32");
    CHECK(s.Schema() == "forward(Tensor input0)");
    CHECK(s.guess_note.find(".wrapper.cpp") != std::string::npos);
  }
  {
    Archive a = OpenPt2("two_input.pt2");
    Pt2RunSpec s = Pt2RunSpecOf(a, ReadPt2(a));
    CHECK(s.kind == Pt2RunSpec::Kind::kProgram);
    CHECK(s.Schema() == "forward(Tensor x, Tensor idx)");
    REQUIRE(s.guess.size() == 2);
    // The batch symbol's range_constraints say [1, 64]: its lower bound.
    CHECK(s.guess[0].value == "1x6:float32");
    CHECK(s.guess[1].value == "1:int64");
  }
}
