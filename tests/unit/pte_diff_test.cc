// tsctl diff of two ExecuTorch files (lib/src/commands/diff_pte.cc), on
// testdata/pte's programs (scripts/gen_pte_testdata.py) and, in the cases
// tagged [corpus] (ctest unit_corpus, skipped without it), those of
// ../shared/corpus/pte, and copies of them with one byte of a stored tensor,
// named blob or delegate changed: each layout (inline constants, the
// constant segment, a .bpte's embedded program, a .ptd's tensors, named
// data, delegate blobs) is compared by value.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_util.h"
#include "tsctl/diff.h"
#include "tsctl/error.h"
#include "tsctl/pte.h"

using namespace tsctl;

namespace {

// A file of ../shared/corpus/pte, for the [corpus] cases: present, or the case fails.
std::string Corpus(const std::string& name) {
  const char* env = std::getenv("TSCTL_SHARED_CORPUS");
  const std::string path = std::string(env && *env ? env : TSCTL_SHARED_CORPUS) + "/pte/" + name;
  REQUIRE(std::filesystem::exists(path));
  return path;
}

std::string Pte(const std::string& name) { return test::TestData("pte/" + name); }

// A copy of `path` with the byte at `offset` changed, in the test's temp dir.
std::string Patched(const std::string& path, uint64_t offset) {
  std::string bytes = test::Slurp(path);
  REQUIRE(offset < bytes.size());
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x5a);
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("tsctl_pte_diff_" + std::to_string(::getpid()) + "_" +
                            std::filesystem::path(path).filename().string())).string();
  std::ofstream(out, std::ios::binary) << bytes;
  return out;
}

bool SectionEqual(const DiffResult& r, DiffSection s) { return r.Section(s).compared && r.Section(s).equal; }

// The one stored tensor `name` differs in `differing` elements, nothing else.
void OneTensorDiffers(const DiffResult& r, const std::string& name, uint64_t differing) {
  REQUIRE(r.parameters.size() == 1);
  CHECK(r.parameters[0].name == name);
  CHECK(r.parameters[0].kind == ChangeKind::kChanged);
  CHECK(r.parameters[0].values_compared);
  CHECK(r.parameters[0].values.differing == differing);
  CHECK(SectionEqual(r, DiffSection::kModules));
  CHECK(SectionEqual(r, DiffSection::kCode));
  CHECK(SectionEqual(r, DiffSection::kRecords));
  CHECK_FALSE(r.Equal());
}

}  // namespace

void SameAsItself(const std::string& f) {
  DiffResult r = DiffPteFiles(f, f);
  CHECK(r.Equal());
  CHECK(r.kind_a == "executorch-program");
  for (DiffSection s : {DiffSection::kFormat, DiffSection::kRecords, DiffSection::kModules, DiffSection::kParameters,
                        DiffSection::kCode, DiffSection::kOperators}) {
    CHECK(SectionEqual(r, s));
  }
  // Sections the format has no counterpart of say so; they are not "same".
  CHECK_FALSE(r.Section(DiffSection::kConstants).compared);
  CHECK_FALSE(r.Section(DiffSection::kExtra).compared);
}

TEST_CASE("a program diffed with itself is the same, section by section", "[pte][diff]") {
  for (const char* f : {"linear_xnnpack.pte", "linear.pte", "add.pte"}) {
    INFO(f);
    SameAsItself(Pte(f));
  }
}

TEST_CASE("corpus: a program diffed with itself is the same", "[pte][diff][corpus]") {
  SameAsItself(Corpus("djl-executorch-engine__3022a8a3_stress_mlp.pte"));
}

struct LayoutCase {
  std::string file;
  PteDataLocation where;
};

void ConstantByteFound(const LayoutCase& c) {
  {
    const std::string& f = c.file;
    INFO(c.file);
    const PteFile pte = ReadPte(f);
    REQUIRE_FALSE(pte.program.tensors.empty());
    const PteStoredTensor& t = pte.program.tensors[0];
    CHECK(t.tensor.location == c.where);
    const uint64_t base = pte.kind == PteKind::kBundled ? pte.bundled.program_offset : 0;
    const std::string g = Patched(f, base + t.tensor.data_offset);
    DiffResult r = DiffPteFiles(f, g);
    std::filesystem::remove(g);
    OneTensorDiffers(r, t.method + ".value" + std::to_string(t.value_index), 1);
  }
}

TEST_CASE("a constant's changed byte is found by value, in each layout", "[pte][diff]") {
  ConstantByteFound({Pte("linear.pte"), PteDataLocation::kSegment});
  ConstantByteFound({Pte("linear.bpte"), PteDataLocation::kSegment});
}

TEST_CASE("corpus: a constant's changed byte is found by value, in each layout", "[pte][diff][corpus]") {
  ConstantByteFound({Corpus("executorch__42b8643f_ModuleLinear-no-constant-segment.pte"), PteDataLocation::kInline});
  ConstantByteFound({Corpus("executorch__b55978fe_conv2d_layer7_conv4b_2.pte"), PteDataLocation::kSegment});
  ConstantByteFound({Corpus("executorch__ea5b42c0_bundled_program.bpte"), PteDataLocation::kSegment});
}

TEST_CASE("a .ptd's tensor and a named blob are compared by their bytes", "[pte][diff]") {
  const std::string ptd = Pte("linear_external.ptd");
  {
    const PteFile data = ReadPte(ptd);
    REQUIRE_FALSE(data.flat_tensor.tensors.empty());
    const PteDataTensor& t = data.flat_tensor.tensors[0];
    const std::string g = Patched(ptd, data.flat_tensor.segments.at(t.segment_index).file_offset + t.offset);
    DiffResult r = DiffPteFiles(ptd, g);
    std::filesystem::remove(g);
    OneTensorDiffers(r, t.fqn, 1);
  }
  const std::string mlp = Pte("linear_xnnpack.pte");
  {
    const PteFile p = ReadPte(mlp);
    REQUIRE_FALSE(p.program.named_data.empty());
    const PteNamedData& d = p.program.named_data[0];
    const std::string g = Patched(mlp, p.program.segments.at(d.segment_index).file_offset + 3);
    DiffResult r = DiffPteFiles(mlp, g);
    std::filesystem::remove(g);
    REQUIRE(r.records.size() == 1);
    CHECK(r.records[0].name == "named data " + d.key);
    CHECK(r.records[0].fields.at(0).field == "crc32");
    CHECK(r.parameters.empty());
    CHECK_FALSE(r.Equal());
  }
}

TEST_CASE("delegates of one size whose blobs differ are different, by CRC-32", "[pte][diff]") {
  // tanh and sigmoid lowered to XNNPACK: the same program, weights and blob size.
  const std::string a = Pte("linear_xnnpack_tanh.pte"), b = Pte("linear_xnnpack_sigmoid.pte");
  DiffResult r = DiffPteFiles(a, b);
  CHECK_FALSE(r.Equal());
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].name == "delegate blob forward.delegate[0] (XnnpackBackend)");
  CHECK(r.records[0].fields.at(0).field == "crc32");
  CHECK(SectionEqual(r, DiffSection::kModules));
  CHECK(SectionEqual(r, DiffSection::kOperators));
  // One byte of the blob changed, in a copy: found the same way.
  const PteFile p = ReadPte(a);
  const PteDelegate& d = p.program.methods.at(0).delegates.at(0);
  const std::string g = Patched(a, d.data_offset + d.bytes / 2);
  DiffResult one = DiffPteFiles(a, g);
  std::filesystem::remove(g);
  REQUIRE(one.records.size() == 1);
  CHECK(one.records[0].name == "delegate blob forward.delegate[0] (XnnpackBackend)");
  CHECK_FALSE(one.Equal());
}

TEST_CASE("corpus: two different programs: signatures, operators, chains, sizes", "[pte][diff][corpus]") {
  const std::string a = Corpus("executorch__42b8643f_ModuleLinear-no-constant-segment.pte");
  const std::string b = Corpus("executorch__707815ad_linear.pte");
  DiffResult r = DiffPteFiles(a, b);
  CHECK(r.operators_added == std::vector<std::string>{"aten::addmm.out", "aten::permute_copy.out"});
  CHECK(r.operators_removed == std::vector<std::string>{"aten::add.out", "aten::mul.out"});
  bool input = false;
  for (const ModuleChange& m : r.modules) {
    if (m.path == "forward.input[0]") {
      input = true;
      CHECK(m.fields.at(0).a == "Tensor Float [2, 2]");
      CHECK(m.fields.at(0).b == "Tensor Float [3, 3]");
    }
  }
  CHECK(input);
  REQUIRE(r.code.size() == 1);
  CHECK(r.code[0].method == "(forward)");
  CHECK_THAT(r.code[0].unified_diff, Catch::Contains("+  1: aten::addmm.out"));
  // B's weights are in a .ptd: named, added, not compared.
  size_t external = 0;
  for (const TensorChange& t : r.parameters) external += t.role == "external" && t.kind == ChangeKind::kAdded;
  CHECK(external == 2);
  CHECK_FALSE(SectionEqual(r, DiffSection::kRecords));
}

TEST_CASE("a file that is not an ExecuTorch file is refused in one line", "[pte][diff]") {
  const std::string f = Pte("add.pte");
  try {
    DiffPteFiles(f, test::TestData("traced_cnn.pt"));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kFormat);
    CHECK_THAT(e.what(), Catch::StartsWith(test::TestData("traced_cnn.pt")));
  }
}
