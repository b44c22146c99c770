// ExecuTorch files (lib/src/pte/): every file of ../shared/corpus/pte is read
// or refused in one line, with facts from its README; hostile files, patched
// from a real program's bytes or built with flatc's builders, are refused in
// one line each (kFormat), never read out of bounds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include "program_generated.h"
#include "test_util.h"
#include "tsctl/error.h"
#include "tsctl/pte.h"

using namespace tsctl;
namespace fb = tsctl::pte_fb;

namespace {

// ../shared/corpus/pte beside the checkout; TSCTL_SHARED_CORPUS in the
// environment names another ../shared/corpus (a worktree elsewhere).
std::string CorpusDir() {
  const char* env = std::getenv("TSCTL_SHARED_CORPUS");
  return std::string(env && *env ? env : TSCTL_SHARED_CORPUS) + "/pte";
}

// The [corpus] cases run in ctest unit_corpus, which reports itself skipped
// where ../shared/corpus/pte is absent; run there without it, they fail.
bool HaveCorpus() { return std::filesystem::is_directory(CorpusDir()); }

std::string Pte(const std::string& name) { return test::TestData("pte/" + name); }

std::string Corpus(const std::string& name) { return CorpusDir() + "/" + name; }

uint64_t Sum(const std::vector<PteSizePart>& parts) {
  uint64_t n = 0;
  for (const PteSizePart& p : parts) n += p.bytes;
  return n;
}

// The one-line kFormat error `read` throws, which starts with "<name>: ".
std::string FormatError(const std::function<void()>& read, const std::string& name) {
  try {
    read();
  } catch (const Error& e) {
    std::string m = e.what();
    INFO(m);
    CHECK(e.kind() == ErrorKind::kFormat);
    CHECK(m.find('\n') == std::string::npos);
    CHECK(m.rfind(name + ": ", 0) == 0);
    return m;
  }
  FAIL("read without an error");
  return {};
}

std::string Refused(const std::string& bytes) {
  return FormatError([&] { ReadPteBytes(bytes, "<hostile>"); }, "<hostile>");
}

bool Calls(const PteFile& f, const std::string& op) {
  for (const PteMethod& m : f.program.methods) {
    for (const PteOperator& o : m.operators) {
      if (PteOperatorKey(o) == op && o.calls > 0) return true;
    }
  }
  return false;
}

bool Delegates(const PteFile& f, const std::string& backend) {
  for (const PteMethod& m : f.program.methods) {
    for (const PteDelegate& d : m.delegates) {
      if (d.backend_id == backend && d.calls > 0 && d.bytes > 0) return true;
    }
  }
  return false;
}

bool HasPart(const PteFile& f, PteSizeKind kind, const std::string& label = "") {
  return std::any_of(f.sizes.begin(), f.sizes.end(),
                     [&](const PteSizePart& p) { return p.kind == kind && p.label == label && p.bytes > 0; });
}

void Put32(std::string& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void Put64(std::string& b, size_t at, uint64_t v) {
  Put32(b, at, static_cast<uint32_t>(v));
  Put32(b, at + 4, static_cast<uint32_t>(v >> 32));
}
std::string U64s(uint64_t a, uint64_t b) {
  std::string s(16, '\0');
  Put64(s, 0, a);
  Put64(s, 8, b);
  return s;
}

}  // namespace

TEST_CASE("every corpus file is read or refused in one line", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  std::set<std::string> refused;
  size_t read = 0;
  for (const auto& e : std::filesystem::directory_iterator(CorpusDir())) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name == "README.md") continue;
    INFO(name);
    PteFile f;
    try {
      f = ReadPte(e.path().string());
    } catch (const Error&) {
      FormatError([&] { ReadPte(e.path().string()); }, e.path().string());
      refused.insert(name);
      continue;
    }
    ++read;
    CHECK(f.file_size == std::filesystem::file_size(e.path()));
    CHECK(Sum(f.sizes) == f.file_size);  // the breakdown accounts for every byte
    if (f.kind == PteKind::kBundled) CHECK(Sum(f.bundled.program_sizes) == f.bundled.program_bytes);
    if (f.kind != PteKind::kFlatTensor) CHECK(!f.program.methods.empty());
    // In memory, the same.
    PteFile g = ReadPteBytes(test::Slurp(e.path().string()), name);
    CHECK(g.program.methods.size() == f.program.methods.size());
    CHECK(g.sizes.size() == f.sizes.size());
  }
  CHECK(refused == std::set<std::string>{"djl-executorch-engine__1710bd00_corrupt.pte",
                                         "EdgeAIApp-ExecuTorch__1085b477_llama_model.pte"});
  CHECK(read == 69);
}

TEST_CASE("the two files that only look like programs say what they start with", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  std::string corrupt = Corpus("djl-executorch-engine__1710bd00_corrupt.pte");
  CHECK_THAT(FormatError([&] { ReadPte(corrupt); }, corrupt),
             Catch::Contains("not an ExecuTorch program, .ptd or .bpte") && Catch::Contains("NOT_A_PTE"));
  std::string text = Corpus("EdgeAIApp-ExecuTorch__1085b477_llama_model.pte");
  CHECK_THAT(FormatError([&] { ReadPte(text); }, text), Catch::Contains("it starts with '# ExecutorTorch"));
}

TEST_CASE("corpus programs: operators, delegates, constants, headers", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  PteFile add = ReadPte(Corpus("executorch__bdae57e4_add.pte"));
  CHECK(add.kind == PteKind::kProgram);
  CHECK(add.identifier == "ET12");
  CHECK(Calls(add, "aten::add.out"));
  CHECK(Calls(ReadPte(Corpus("executorch__43252ca7_add.pte")), "aten::add.out"));
  CHECK(Calls(ReadPte(Corpus("node-executorch__68005985_mul.pte")), "aten::mul.out"));
  for (const char* x : {"djl-executorch-engine__8371b86d_add.pte", "djl-executorch-engine__621df34c_add_unplanned.pte",
                        "djl-executorch-engine__f7830316_clamp5.pte", "djl-executorch-engine__e3aa97e1_conv.pte"}) {
    INFO(x);
    PteFile f = ReadPte(Corpus(x));
    CHECK(Delegates(f, "XnnpackBackend"));
    CHECK(f.program.methods[0].instructions.delegate_calls >= 1);
    CHECK(HasPart(f, PteSizeKind::kDelegate, "XnnpackBackend"));
  }
  CHECK(Delegates(ReadPte(Corpus("djl-executorch-engine__1e92320d_openvino_tiny.pte")), "OpenvinoBackend"));

  // XNNPACK weights as named data, in a 32-byte extended header's segments.
  PteFile lin = ReadPte(Corpus("djl-executorch-engine__b95febbb_lin129.pte"));
  CHECK(lin.header.present);
  CHECK(lin.header.length == 32);
  CHECK(lin.header.segment_data_size == lin.file_size - lin.header.segment_base_offset);
  CHECK(lin.program.named_data.size() == 2);
  CHECK(HasPart(lin, PteSizeKind::kNamedData));
  CHECK(lin.program.methods[0].inputs[0].tensor.sizes == std::vector<int64_t>{129});
  CHECK(lin.program.methods[0].inputs[0].tensor.dtype == "Float");

  // Cadence and Cortex-M kernels; constants in the constant segment.
  PteFile conv = ReadPte(Corpus("executorch__3dfa3e6a_conv2d_layer0_conv1.pte"));
  CHECK(Calls(conv, "cadence::quantized_conv2d_nchw.per_tensor_out"));
  CHECK(HasPart(conv, PteSizeKind::kConstants));
  for (const PteStoredTensor& t : conv.program.tensors) CHECK(t.tensor.location == PteDataLocation::kSegment);
  CHECK(Calls(ReadPte(Corpus("executorch__643cda3c_model.pte")), "cortex_m::quantized_conv2d.out"));

  // An LLM of many methods, QNN-delegated.
  PteFile llm = ReadPte(Corpus("executorch__ad6bee06_stories260k_hybrid_llama_qnn.pte"));
  CHECK(llm.program.methods.size() >= 15);
  CHECK(llm.program.methods.size() <= 49);
  CHECK(Delegates(llm, "QnnBackend"));

  // A scalar input.
  PteFile prim = ReadPte(Corpus("djl-executorch-engine__09708525_prim_input.pte"));
  CHECK(prim.program.methods[0].inputs[1].kind == PteValueKind::kDouble);
}

TEST_CASE("corpus: the old layout, external data, .ptd and .bpte", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  // Oldest sample (2023-12): no extended header, constants inside the flatbuffer.
  PteFile old = ReadPte(Corpus("executorch__91b52416_model.pte"));
  CHECK(!old.header.present);
  CHECK(old.program.constant_buffers > 0);
  REQUIRE(!old.program.tensors.empty());
  CHECK(old.program.tensors[0].tensor.location == PteDataLocation::kInline);
  CHECK(HasPart(old, PteSizeKind::kConstants));
  // 24-byte extended header.
  PteFile training = ReadPte(Corpus("executorch__8d5b6aba_xor.pte"));
  CHECK(training.header.length == 24);
  CHECK(!training.header.segment_data_size);
  bool external = false;
  for (const PteStoredTensor& t : training.program.tensors) {
    if (t.tensor.location == PteDataLocation::kExternal && t.tensor.fqn == "net.linear.weight") external = true;
  }
  CHECK(external);
  CHECK(training.program.methods.size() == 4);

  PteFile xor_ptd = ReadPte(Corpus("executorch__3351e75b_xor.ptd"));
  CHECK(xor_ptd.kind == PteKind::kFlatTensor);
  CHECK(xor_ptd.header.magic == "FH01");
  REQUIRE(xor_ptd.flat_tensor.tensors.size() == 4);
  CHECK(xor_ptd.flat_tensor.tensors[0].fqn == "net.linear.weight");
  CHECK(xor_ptd.flat_tensor.tensors[0].sizes == std::vector<int64_t>{10, 2});
  CHECK(xor_ptd.flat_tensor.tensors[0].nbytes == 80);
  CHECK(xor_ptd.flat_tensor.named_data.size() == 4);
  PteFile linear_ptd = ReadPte(Corpus("executorch__edab857b_linear.ptd"));  // the first FT01 layout
  CHECK(linear_ptd.flat_tensor.first_layout);
  REQUIRE(linear_ptd.flat_tensor.tensors.size() == 2);
  CHECK(linear_ptd.flat_tensor.tensors[1].fqn == "linear.bias");
  CHECK(linear_ptd.flat_tensor.tensors[1].offset == 48);

  PteFile bundled = ReadPte(Corpus("executorch__ea5b42c0_bundled_program.bpte"));
  CHECK(bundled.kind == PteKind::kBundled);
  CHECK(bundled.identifier == "BP08");
  REQUIRE(bundled.bundled.suites.size() == 1);
  CHECK(bundled.bundled.suites[0].method_name == "forward");
  CHECK(!bundled.bundled.suites[0].cases.empty());
  CHECK(bundled.bundled.suites[0].cases[0].inputs == 2);
  CHECK(bundled.bundled.program_bytes == 1696);
  CHECK(bundled.bundled.program_header.length == 24);
  CHECK(Calls(bundled, "aten::add.out"));
}

TEST_CASE("LooksLikePte recognises identifiers, not ZIPs or text", "[pte]") {
  CHECK(LooksLikePte(std::string("\x1c\0\0\0ET12", 8)));
  CHECK(LooksLikePte(std::string("\x1c\0\0\0ET09", 8)));
  CHECK(LooksLikePte(std::string("\x44\0\0\0FT01", 8)));
  CHECK(LooksLikePte(std::string("\x2c\0\0\0BP08", 8)));
  CHECK(!LooksLikePte(std::string("PK\x03\x04\x14\0\0\0", 8)));
  CHECK(!LooksLikePte("NOT_A_PTE"));
  CHECK(!LooksLikePte("\x1c\0\0"));
}

TEST_CASE("identifiers of other schema versions and tiny files are refused in one line", "[pte]") {
  CHECK_THAT(Refused(std::string("\x1c\0\0\0ET11", 8) + std::string(64, '\0')),
             Catch::Contains("ExecuTorch program of schema version 11; this tsctl reads ET12"));
  CHECK_THAT(Refused(std::string("\x1c\0\0\0BP07", 8) + std::string(64, '\0')), Catch::Contains("reads BP08"));
  CHECK_THAT(Refused(std::string("\x1c\0\0\0FT02", 8) + std::string(64, '\0')), Catch::Contains("reads FT01"));
  CHECK_THAT(Refused(""), Catch::Contains("0 bytes"));
  CHECK_THAT(Refused("ET12"), Catch::Contains("4 bytes"));
  CHECK_THAT(Refused(std::string("\x1c\0\0\0ET12", 8)), Catch::Contains("verifier"));
  CHECK_THAT(Refused(std::string("\x1c\0\0\0ET12eh00", 12)), Catch::Contains("ends inside its extended header"));
  CHECK_THAT(Refused(std::string("\x44\0\0\0FT01", 8) + std::string(64, '\0')), Catch::Contains("FH01"));
  const std::string path = "/nonexistent/model.pte";
  try {
    ReadPte(path);
    FAIL("read a missing file");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kIo);
    CHECK(std::string(e.what()).rfind(path + ": ", 0) == 0);
  }
}

// ---- Hostile bytes patched from a real program (lin129.pte: a 32-byte
// extended header, four segments, named data, an XNNPACK delegate). ----

namespace {

// Offsets of the extended header's fields.
constexpr size_t kProgramSize = 16, kSegmentBase = 24, kSegmentDataSize = 32;

std::string Lin129() { return test::Slurp(Corpus("djl-executorch-engine__b95febbb_lin129.pte")); }

}  // namespace

TEST_CASE("a real program truncated anywhere is refused in one line", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  const std::string real = Lin129();
  REQUIRE(real.size() == 35328);
  for (size_t cut : {size_t{0}, size_t{3}, size_t{7}, size_t{8}, size_t{11}, size_t{16}, size_t{31}, size_t{39},
                     size_t{40}, size_t{64}, size_t{1000}, size_t{1183}, size_t{1184}, size_t{1280}, size_t{2000},
                     real.size() - 257, real.size() - 1}) {
    INFO("cut at " << cut);
    Refused(real.substr(0, cut));
  }
  const std::string ptd = test::Slurp(Corpus("executorch__3351e75b_xor.ptd"));
  for (size_t cut : {size_t{8}, size_t{12}, size_t{47}, size_t{48}, size_t{300}, size_t{543}, size_t{544}, ptd.size() - 1}) {
    INFO("ptd cut at " << cut);
    Refused(ptd.substr(0, cut));
  }
  const std::string bpte = test::Slurp(Corpus("executorch__ea5b42c0_bundled_program.bpte"));
  for (size_t cut : {size_t{8}, size_t{100}, size_t{2000}, bpte.size() - 1}) {
    INFO("bpte cut at " << cut);
    Refused(bpte.substr(0, cut));
  }
}

TEST_CASE("extended header offsets and sizes that do not fit are refused in one line", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  const std::string real = Lin129();
  const uint64_t size = real.size();
  auto patched = [&](size_t at, uint64_t v) {
    std::string b = real;
    Put64(b, at, v);
    return Refused(b);
  };
  CHECK_THAT(patched(kProgramSize, size + 1), Catch::Contains("past the end of the file"));
  CHECK_THAT(patched(kProgramSize, UINT64_MAX), Catch::Contains("past the end of the file"));
  CHECK_THAT(patched(kProgramSize, 20), Catch::Contains("ends inside the header"));
  CHECK_THAT(patched(kProgramSize, 600), Catch::Contains("fails the FlatBuffers verifier"));
  CHECK_THAT(patched(kSegmentBase, size + 16), Catch::Contains("past the end of the file"));
  CHECK_THAT(patched(kSegmentBase, 1184 - 64), Catch::Contains("inside the flatbuffer"));
  CHECK_THAT(patched(kSegmentBase, UINT64_MAX - 8), Catch::Contains("past the end of the file"));
  CHECK_THAT(patched(kSegmentDataSize, size), Catch::Contains("runs past the end of the file"));
  CHECK_THAT(patched(kSegmentDataSize, UINT64_MAX), Catch::Contains("overflows 64 bits"));
  CHECK_THAT(patched(kSegmentDataSize, 1000), Catch::Contains("past the segment data the header gives"));
  std::string b = real;
  Put32(b, 12, 8);  // header length
  CHECK_THAT(Refused(b), Catch::Contains("at least 24"));
  b = real;
  b.replace(8, 4, "eh01");
  CHECK_THAT(Refused(b), Catch::Contains("this tsctl reads eh00"));
  b = real;
  Put32(b, 0, 0xfffffff0);  // root offset
  CHECK_THAT(Refused(b), Catch::Contains("fails the FlatBuffers verifier"));
}

TEST_CASE("a segment moved onto another, onto the flatbuffer or past the end is refused", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  const std::string real = Lin129();
  // Segment 2: {offset 768, size 33024}, stored size first.
  size_t at = real.find(U64s(33024, 768));
  REQUIRE(at != std::string::npos);
  const size_t offset_at = at + 8;
  auto patched = [&](uint64_t offset) {
    std::string b = real;
    Put64(b, offset_at, offset);
    return Refused(b);
  };
  CHECK_THAT(patched(0), Catch::Contains("overlap"));
  CHECK_THAT(patched(real.size()), Catch::Contains("past the end of the file"));
  CHECK_THAT(patched(UINT64_MAX - 100), Catch::Contains("overflows 64 bits"));
  std::string b = real;
  Put64(b, at, 1u << 20);  // its size
  CHECK_THAT(Refused(b), Catch::Contains("past the end of the file"));
}

TEST_CASE("vector and string lengths past the buffer fail the verifier in one line", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  const std::string real = Lin129();
  const std::string key = "79ecd561afb8dfd3b2e68da7b144ddea395854ffdd7632674ebf0d8da8a2b4c9";
  size_t at = real.find(key);
  REQUIRE(at != std::string::npos);
  for (uint32_t length : {0x7ffffff0u, 0xffffffffu, 40000u}) {
    std::string b = real;
    Put32(b, at - 4, length);
    CHECK_THAT(Refused(b), Catch::Contains("fails the FlatBuffers verifier"));
  }
  std::string sizes;  // the input's sizes vector: one element, 129
  sizes.resize(8);
  Put32(sizes, 0, 1);
  Put32(sizes, 4, 129);
  at = real.find(sizes);
  REQUIRE(at != std::string::npos);
  for (uint32_t length : {0x3fffffffu, 0x40000000u, 0xfffffffu}) {
    std::string b = real;
    Put32(b, at, length);
    CHECK_THAT(Refused(b), Catch::Contains("fails the FlatBuffers verifier"));
  }
}

TEST_CASE("a .ptd's and a .bpte's headers that do not fit are refused in one line", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  const std::string ptd = test::Slurp(Corpus("executorch__3351e75b_xor.ptd"));
  std::string b = ptd;
  Put64(b, 16, 8);  // flatbuffer offset inside the header
  CHECK_THAT(Refused(b), Catch::Contains("lies inside the header"));
  b = ptd;
  Put64(b, 24, UINT64_MAX);  // flatbuffer size
  CHECK_THAT(Refused(b), Catch::Contains("overflows 64 bits"));
  b = ptd;
  Put64(b, 40, 1 << 20);  // segment data size
  CHECK_THAT(Refused(b), Catch::Contains("past the end of the file"));
  b = ptd;
  b.replace(8, 4, "FH02");
  CHECK_THAT(Refused(b), Catch::Contains("this tsctl reads FH01"));

  const std::string bpte = test::Slurp(Corpus("executorch__ea5b42c0_bundled_program.bpte"));
  size_t at = bpte.find("ET12eh00");
  REQUIRE(at != std::string::npos);
  b = bpte;
  b.replace(at, 4, "BP08");  // a bundled program inside a bundled program
  CHECK_THAT(Refused(b), Catch::Contains("carries a bundled_program"));
  b = bpte;
  b.replace(at, 4, "XX12");
  CHECK_THAT(Refused(b), Catch::StartsWith("<hostile>: its program: not an ExecuTorch program"));
  b = bpte;
  Put64(b, at + 12, UINT64_MAX);  // the embedded program's program size
  CHECK_THAT(Refused(b), Catch::StartsWith("<hostile>: its program: extended header: program size 18446744073709551615"));
}

// ---- Hostile programs built with flatc's builders: indices that point past
// what they index, shared tables. ----

namespace {

struct Spec {
  int32_t op_index = 0;                    // the kernel call's operator
  int32_t delegate_call = -1;              // a delegate call's delegate (-1: none)
  bool delegate = false;                   // one delegate, its blob in segment delegate_segment
  uint32_t delegate_segment = 0;
  std::vector<std::pair<uint64_t, uint64_t>> segments;  // (offset, size)
  std::vector<uint64_t> constant_offsets;  // the constant segment (segment 0); [0] is reserved
  uint32_t constant = 0;                   // a constant tensor's data_buffer_idx (0: none)
  std::vector<int32_t> input_sizes{2};
  int32_t input = 0;                       // the value the method's inputs name
  size_t inputs = 1;                       // how many inputs name it
  size_t shared_values = 0;                // more references to the first value
  std::vector<int32_t> kernel_args;        // the kernel call's arguments (value indices)
  std::vector<int32_t> tensor_list;        // when not empty: a TensorList value of these items, after the others
  int32_t jump_to = -1;                    // when >= 0: a JumpFalseCall on value 0 to this instruction
};

// A program with an extended header (32 bytes, inserted after the identifier
// as ExecuTorch's serializer does) and zero bytes for its segments.
std::string Build(const Spec& s) {
  flatbuffers::FlatBufferBuilder b;
  auto input = fb::CreateTensorDirect(b, fb::ScalarType::FLOAT, 0, &s.input_sizes);
  std::vector<flatbuffers::Offset<fb::EValue>> values{fb::CreateEValue(b, fb::KernelTypes::Tensor, input.Union())};
  for (size_t i = 0; i < s.shared_values; ++i) values.push_back(values[0]);
  if (s.constant) {
    std::vector<int32_t> two{2};
    auto c = fb::CreateTensorDirect(b, fb::ScalarType::FLOAT, 0, &two, nullptr, false, s.constant);
    values.push_back(fb::CreateEValue(b, fb::KernelTypes::Tensor, c.Union()));
  }
  if (!s.tensor_list.empty()) {
    values.push_back(fb::CreateEValue(b, fb::KernelTypes::TensorList, fb::CreateTensorListDirect(b, &s.tensor_list).Union()));
  }
  std::vector<int32_t> inputs(s.inputs, s.input), outputs{0};
  std::vector<flatbuffers::Offset<fb::Instruction>> code{fb::CreateInstruction(
      b, fb::InstructionArguments::KernelCall, fb::CreateKernelCallDirect(b, s.op_index, &s.kernel_args).Union())};
  if (s.jump_to >= 0) {
    code.push_back(fb::CreateInstruction(b, fb::InstructionArguments::JumpFalseCall,
                                         fb::CreateJumpFalseCall(b, 0, s.jump_to).Union()));
  }
  if (s.delegate_call >= 0) {
    code.push_back(fb::CreateInstruction(b, fb::InstructionArguments::DelegateCall,
                                         fb::CreateDelegateCallDirect(b, s.delegate_call).Union()));
  }
  std::vector<flatbuffers::Offset<fb::Chain>> chains{fb::CreateChainDirect(b, nullptr, nullptr, &code)};
  std::vector<flatbuffers::Offset<fb::Operator>> ops{fb::CreateOperatorDirect(b, "aten::add", "out")};
  std::vector<flatbuffers::Offset<fb::BackendDelegate>> delegates;
  if (s.delegate) {
    auto ref = fb::CreateBackendDelegateDataReference(b, fb::DataLocation::SEGMENT, s.delegate_segment);
    delegates.push_back(fb::CreateBackendDelegateDirect(b, "XnnpackBackend", ref));
  }
  std::vector<flatbuffers::Offset<fb::ExecutionPlan>> plans{
      fb::CreateExecutionPlanDirect(b, "forward", 0, &values, &inputs, &outputs, &chains, &ops, &delegates)};
  std::vector<flatbuffers::Offset<fb::DataSegment>> segments;
  uint64_t data = 0;
  for (auto [offset, size] : s.segments) {
    segments.push_back(fb::CreateDataSegment(b, offset, size));
    data = std::max(data, offset + size);
  }
  auto constants = s.constant_offsets.empty() ? 0 : fb::CreateSubsegmentOffsetsDirect(b, 0, &s.constant_offsets);
  fb::FinishProgramBuffer(b, fb::CreateProgramDirect(b, 0, &plans, nullptr, nullptr, &segments, constants));
  std::string flat(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  const uint64_t program_size = flat.size() + 32, base = (program_size + 63) / 64 * 64;
  std::string header(32, '\0');
  header.replace(0, 4, "eh00");
  Put32(header, 4, 32);
  Put64(header, 8, program_size);
  Put64(header, 16, s.segments.empty() ? 0 : base);
  Put64(header, 24, data);
  std::string out = flat.substr(0, 8) + header + flat.substr(8);
  uint32_t root = 0;
  std::memcpy(&root, flat.data(), 4);  // little-endian hosts only, as the rest of tsctl
  Put32(out, 0, root + 32);            // the root moved by the header
  if (!s.segments.empty()) out.resize(base + data, '\0');
  return out;
}

}  // namespace

TEST_CASE("a built program reads (the builder is right)", "[pte]") {
  Spec s;
  s.delegate = true;
  s.delegate_call = 0;
  s.delegate_segment = 1;
  s.segments = {{0, 64}, {64, 100}};
  s.constant_offsets = {0, 0, 16};
  s.constant = 2;
  PteFile f = ReadPteBytes(Build(s), "built");
  REQUIRE(f.program.methods.size() == 1);
  CHECK(Calls(f, "aten::add.out"));
  CHECK(Delegates(f, "XnnpackBackend"));
  REQUIRE(f.program.tensors.size() == 1);
  CHECK(f.program.tensors[0].tensor.segment_offset == 16);
  CHECK(HasPart(f, PteSizeKind::kConstants));
  CHECK(Sum(f.sizes) == f.file_size);
}

TEST_CASE("indices past what they index are refused in one line", "[pte]") {
  Spec s;
  s.op_index = 3;
  CHECK_THAT(Refused(Build(s)), Catch::Contains("calls operator 3, not one of the method's 1"));
  s = Spec();
  s.op_index = -1;
  CHECK_THAT(Refused(Build(s)), Catch::Contains("calls operator -1"));
  s = Spec();
  s.delegate_call = 2;
  CHECK_THAT(Refused(Build(s)), Catch::Contains("calls delegate 2"));
  s = Spec();
  s.delegate = true;
  s.delegate_segment = 5;
  s.segments = {{0, 16}};
  CHECK_THAT(Refused(Build(s)), Catch::Contains("segment 5, past the 1"));
  s = Spec();
  s.input = 7;
  CHECK_THAT(Refused(Build(s)), Catch::Contains("input 0 is value 7, not one of the method's 1 values"));
  s = Spec();
  s.segments = {{0, 64}};
  s.constant_offsets = {0, 0};
  s.constant = 4;
  CHECK_THAT(Refused(Build(s)), Catch::Contains("constant 4, past the 2 offsets"));
  s.constant_offsets = {0, 60};  // 8 bytes at 60 in a segment of 64
  s.constant = 1;
  CHECK_THAT(Refused(Build(s)), Catch::Contains("run past the end of segment 0"));
}

TEST_CASE("segments that overlap or leave the file in a built program are refused", "[pte]") {
  Spec s;
  s.segments = {{0, 100}, {64, 100}};
  CHECK_THAT(Refused(Build(s)), Catch::Contains("segments 0 (bytes"));
  s.segments = {{0, 100}};
  std::string b = Build(s);
  CHECK_THAT(Refused(b.substr(0, b.size() - 1)), Catch::Contains("past the end of the file"));
}

TEST_CASE("tables shared again and again are refused, not multiplied", "[pte]") {
  // 200000 references to one value: the verifier's table bound.
  Spec s;
  s.shared_values = 200000;
  CHECK_THAT(Refused(Build(s)), Catch::Contains("fails the FlatBuffers verifier"));
  // 20000 inputs naming one tensor of 100000 sizes: the reader's bound on what it copies.
  s = Spec();
  s.input_sizes.assign(100000, 1);
  s.inputs = 20000;
  CHECK_THAT(Refused(Build(s)), Catch::Contains("again and again"));
}

// ---- tsctl graph: the instruction chains ----

TEST_CASE("graph prints a built program's chain as print_program does", "[pte]") {
  Spec s;
  s.segments = {{0, 64}};
  s.constant_offsets = {0, 0};
  s.constant = 1;  // value 1: a constant tensor
  s.tensor_list = {0, 1};  // value 2
  s.kernel_args = {0, 1, 2, 0};
  s.jump_to = 0;
  const std::string bytes = Build(s);
  // The summary does not read the chains; graph does.
  CHECK(ReadPteBytes(bytes, "built").program.methods[0].chain_list.empty());
  PteFile f = ReadPteBytes(bytes, "built", {.chains = true});
  CHECK(RenderPteGraph(f, "forward", false) ==
        "method forward, chain 0: 2 instructions\n"
        "  0: aten::add.out 0I0O0Tm.[2]f,1CT[2]f,2TL[0, 1],0I0O0Tm.[2]f\n"
        "  1: JF (0I0O0Tm.[2]f) -> 0\n");
  const std::string dot = RenderPteGraph(f, "forward", true);
  CHECK_THAT(dot, Catch::StartsWith("digraph \"forward\" {"));
  CHECK_THAT(dot, Catch::Contains("c0_in0 -> c0_i0;"));  // the input, named first by the method
  CHECK_THAT(dot, Catch::Contains("c0_in0 -> c0_i1;"));  // then by the jump
  CHECK_THAT(dot, Catch::Contains("c0_in0 -> c0_out0;"));
  CHECK_THAT(dot, !Catch::Contains("c0_i0 -> c0_i0"));   // named twice by one call: no loop
  CHECK_THAT(dot, !Catch::Contains("c0_i0 -> c0_i1"));   // the constant is not an edge
  try {
    RenderPteGraph(f, "decode", false);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    CHECK_THAT(e.what(), Catch::Contains("no method 'decode' in the program (it has forward)"));
  }
}

TEST_CASE("graph refuses chains that name values, items or instructions past their tables", "[pte]") {
  auto refused = [](const Spec& s) {
    const std::string bytes = Build(s);
    ReadPteBytes(bytes, "<hostile>");  // the summary does not follow the chains' indices
    return FormatError([&] { ReadPteBytes(bytes, "<hostile>", {.chains = true}); }, "<hostile>");
  };
  Spec s;
  s.kernel_args = {0, 9};
  CHECK_THAT(refused(s), Catch::Contains("chain 0, instruction 0 names value 9, not one of the method's 1 values"));
  s = Spec();
  s.kernel_args = {-2};
  CHECK_THAT(refused(s), Catch::Contains("names value -2"));
  s = Spec();
  s.tensor_list = {0, 5};
  CHECK_THAT(refused(s), Catch::Contains("value 1 names value 5, not one of the method's 2 values"));
  s = Spec();
  s.jump_to = 3;
  CHECK_THAT(refused(s), Catch::Contains("instruction 1 jumps to instruction 3, outside its chain of 2"));
}

TEST_CASE("graph of every corpus program: one line per instruction, DOT edges between calls", "[pte][corpus]") {
  REQUIRE(HaveCorpus());
  size_t programs = 0;
  for (const auto& e : std::filesystem::directory_iterator(CorpusDir())) {
    if (!LooksLikePte(test::Slurp(e.path().string()).substr(0, kPteHeadBytes))) continue;
    PteFile f = ReadPte(e.path().string(), {.chains = true});
    if (f.kind == PteKind::kFlatTensor) continue;
    for (const PteMethod& m : f.program.methods) {
      INFO(e.path().string() << " " << m.name);
      const std::string text = RenderPteGraph(f, m.name, false);
      const PteInstructionCounts& c = m.instructions;
      const uint64_t n = c.kernel_calls + c.delegate_calls + c.moves + c.jump_false + c.frees + c.unknown;
      CHECK(static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')) == n + m.chain_list.size());
      CHECK_THAT(RenderPteGraph(f, m.name, true), Catch::EndsWith("}\n"));
    }
    ++programs;
  }
  CHECK(programs >= 60);
  PteFile add = ReadPte(Corpus("executorch__43252ca7_add.pte"), {.chains = true});
  CHECK(RenderPteGraph(add, "forward", false) ==
        "method forward, chain 0: 1 instruction\n"
        "  0: aten::add.out 0I0Tm1.0[1]f,1I1Tm1.16[1]f,3I1,2O0Tm1.32[1]f,2O0Tm1.32[1]f\n");
  // "forward", the default, is the first method where the program has none of that name.
  PteFile llama = ReadPte(Corpus("executorch__01e15984_stories260k_hybrid_llama_qnn.pte"), {.chains = true});
  CHECK_THAT(RenderPteGraph(llama, "forward", false), Catch::StartsWith("method kv_forward, chain 0: 1 instruction\n"));
  CHECK_THAT(RenderPteGraph(llama, "get_max_seq_len", false), Catch::StartsWith("method get_max_seq_len, chain 0"));
  PteFile conv = ReadPte(Corpus("executorch__ce8de5c4_CadenceDemoModel.pte"), {.chains = true});
  const std::string dot = RenderPteGraph(conv, "forward", true);
  CHECK_THAT(dot, Catch::Contains("c0_in0 -> c0_i0;"));
  CHECK_THAT(dot, Catch::Contains("c0_i0 -> c0_i1;"));
  CHECK_THAT(dot, Catch::Contains("c0_i1 -> c0_i2;"));
  CHECK_THAT(dot, Catch::Contains("c0_i2 -> c0_out0;"));
  CHECK_THAT(RenderPteGraph(conv, "forward", false), Catch::Contains(",22D1.987867986592948e-05,"));
}

// testdata/pte: files of tsctl's own (scripts/gen_pte_testdata.py), so that
// reading, refusing and drawing ExecuTorch files is tested on every machine.
namespace {
const char* const kTestdataPte[] = {"add.pte",         "linear.pte",          "linear_b.pte",
                                    "linear_xnnpack.pte", "linear_xnnpack_b.pte", "linear_xnnpack_tanh.pte",
                                    "linear_xnnpack_sigmoid.pte", "linear_external.pte", "linear_external.ptd",
                                    "linear.bpte"};
}  // namespace

TEST_CASE("testdata files: kinds, headers, operators, delegates, named data, .ptd, .bpte", "[pte]") {
  for (const char* name : kTestdataPte) {
    INFO(name);
    const PteFile f = ReadPte(Pte(name));
    CHECK(f.file_size == std::filesystem::file_size(Pte(name)));
    CHECK(Sum(f.sizes) == f.file_size);  // the breakdown accounts for every byte
    if (f.kind == PteKind::kBundled) CHECK(Sum(f.bundled.program_sizes) == f.bundled.program_bytes);
    const PteFile g = ReadPteBytes(test::Slurp(Pte(name)), name);
    CHECK(g.program.methods.size() == f.program.methods.size());
    CHECK(g.sizes.size() == f.sizes.size());
  }
  const PteFile add = ReadPte(Pte("add.pte"));
  CHECK(add.kind == PteKind::kProgram);
  CHECK(add.identifier == "ET12");
  CHECK(!add.header.present);
  CHECK(Calls(add, "aten::add.out"));
  CHECK(add.program.tensors.empty());

  const PteFile lin = ReadPte(Pte("linear.pte"));
  CHECK(lin.header.present);
  CHECK(lin.header.length == 32);
  CHECK(lin.header.segment_data_size == lin.file_size - lin.header.segment_base_offset);
  CHECK(Calls(lin, "aten::addmm.out"));
  CHECK(Calls(lin, "aten::relu.out"));
  REQUIRE(lin.program.tensors.size() == 3);
  for (const PteStoredTensor& t : lin.program.tensors) CHECK(t.tensor.location == PteDataLocation::kSegment);
  CHECK(HasPart(lin, PteSizeKind::kConstants));
  REQUIRE(lin.program.methods.size() == 1);
  CHECK(lin.program.methods[0].inputs[0].tensor.sizes == std::vector<int64_t>{2, 4});
  CHECK(lin.program.methods[0].inputs[0].tensor.dtype == "Float");

  const PteFile xnn = ReadPte(Pte("linear_xnnpack.pte"));
  CHECK(Delegates(xnn, "XnnpackBackend"));
  CHECK(xnn.program.methods[0].instructions.delegate_calls >= 1);
  CHECK(HasPart(xnn, PteSizeKind::kDelegate, "XnnpackBackend"));
  CHECK(!xnn.program.named_data.empty());
  CHECK(HasPart(xnn, PteSizeKind::kNamedData));

  const PteFile ext = ReadPte(Pte("linear_external.pte"));
  bool external = false;
  for (const PteStoredTensor& t : ext.program.tensors) {
    if (t.tensor.location == PteDataLocation::kExternal && t.tensor.fqn == "lin.weight") external = true;
  }
  CHECK(external);
  const PteFile ptd = ReadPte(Pte("linear_external.ptd"));
  CHECK(ptd.kind == PteKind::kFlatTensor);
  CHECK(ptd.header.magic == "FH01");
  REQUIRE(ptd.flat_tensor.tensors.size() == 2);
  bool weight = false;
  for (const PteDataTensor& t : ptd.flat_tensor.tensors) {
    if (t.fqn == "lin.weight") weight = t.sizes == std::vector<int64_t>{3, 4} && t.nbytes == 48;
  }
  CHECK(weight);

  const PteFile bundled = ReadPte(Pte("linear.bpte"));
  CHECK(bundled.kind == PteKind::kBundled);
  CHECK(bundled.identifier == "BP08");
  REQUIRE(bundled.bundled.suites.size() == 1);
  CHECK(bundled.bundled.suites[0].method_name == "forward");
  REQUIRE(bundled.bundled.suites[0].cases.size() == 1);
  CHECK(bundled.bundled.suites[0].cases[0].inputs == 1);
  CHECK(Calls(bundled, "aten::addmm.out"));
}

TEST_CASE("testdata files cut at every byte are refused in one line", "[pte]") {
  for (const char* name : kTestdataPte) {
    const std::string bytes = test::Slurp(Pte(name));
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      INFO(name << " cut at " << cut);
      Refused(bytes.substr(0, cut));
    }
  }
}

TEST_CASE("graph of testdata programs: one line per instruction, DOT edges between calls", "[pte]") {
  for (const char* name : kTestdataPte) {
    const PteFile f = ReadPte(Pte(name), {.chains = true});
    if (f.kind == PteKind::kFlatTensor) continue;
    for (const PteMethod& m : f.program.methods) {
      INFO(name << " " << m.name);
      const std::string text = RenderPteGraph(f, m.name, false);
      const PteInstructionCounts& c = m.instructions;
      const uint64_t n = c.kernel_calls + c.delegate_calls + c.moves + c.jump_false + c.frees + c.unknown;
      CHECK(static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')) == n + m.chain_list.size());
      CHECK_THAT(RenderPteGraph(f, m.name, true), Catch::EndsWith("}\n"));
    }
  }
  const PteFile add = ReadPte(Pte("add.pte"), {.chains = true});
  CHECK_THAT(RenderPteGraph(add, "forward", false),
             Catch::StartsWith("method forward, chain 0: 1 instruction\n  0: aten::add.out "));
}
