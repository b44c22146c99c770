// What tsctl reads for running ExecuTorch programs, without a runtime: a
// bundled program's test cases (each value's dtype, sizes and bytes in the
// file) and an ETDump (ExecuTorch's event tracer's record, testdata/pte/
// linear.etdp: `tsctl bench --iters 3 --warmup 0 --etdump` of linear.pte)
// with the per-operator table bench --profile builds from it.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include <stdlib.h>

#include <fstream>

#include "../../lib/src/archive/numpy_file.h"
#include "../../lib/src/commands/bench_pte.h"
#include "test_util.h"
#include "tsctl/dtype.h"
#include "tsctl/error.h"
#include "tsctl/pte.h"

using namespace tsctl;

namespace {
std::string Pte(const std::string& name) { return test::TestData("pte/" + name); }
}  // namespace

TEST_CASE("a bundled program's test cases: each value where its bytes lie", "[pte]") {
  const std::string bytes = test::Slurp(Pte("linear.bpte"));
  const PteFile f = ReadPte(Pte("linear.bpte"));
  REQUIRE(f.bundled.suites.size() == 1);
  REQUIRE(f.bundled.suites[0].cases.size() == 1);
  const PteTestCase& c = f.bundled.suites[0].cases[0];
  REQUIRE(c.input_values.size() == 1);
  REQUIRE(c.expected_values.size() == 1);
  const PteBundledValue& in = c.input_values[0];
  CHECK(in.kind == PteValueKind::kTensor);
  CHECK(in.scalar_type == 6);  // Float
  CHECK(in.sizes == std::vector<int64_t>{2, 4});
  CHECK(in.dim_order == std::vector<int64_t>{0, 1});
  CHECK(in.data_size == 32);
  CHECK(in.data_offset + in.data_size <= bytes.size());
  CHECK(c.expected_values[0].sizes == std::vector<int64_t>{2, 3});
  CHECK(c.data_bytes == in.data_size + c.expected_values[0].data_size);
  // The input is torch.ones(2, 4) (scripts/gen_pte_testdata.py): 8 floats 1.0 at its offset.
  for (int i = 0; i < 8; ++i) {
    float v;
    std::memcpy(&v, bytes.data() + in.data_offset + 4 * i, 4);
    CHECK(v == 1.0f);
  }
}

TEST_CASE("an ETDump: runs, events, and the operator table bench --profile builds", "[pte]") {
  const std::string bytes = test::Slurp(Pte("linear.etdp"));
  const PteETDump dump = ReadETDump(bytes, "linear.etdp");
  // A block for loading (Method::init, Program::load_method), one per call.
  REQUIRE(dump.runs.size() == 4);
  CHECK(dump.runs[0].name == "Default");
  CHECK(dump.runs[1].name == "Execute");
  size_t operator_calls = 0;
  for (const PteProfileEvent& e : dump.runs[1].events) {
    if (e.name == "OPERATOR_CALL") {
      ++operator_calls;
      CHECK(e.end >= e.start);
      CHECK(e.chain == 0);
    }
  }
  CHECK(operator_calls == 4);
  uint64_t profiled = 0;
  const std::vector<OpStat> ops = PteOperatorProfile(dump, ReadPte(Pte("linear.pte"), {.chains = true}), "forward", profiled);
  REQUIRE(ops.size() == 4);
  uint64_t total = 0;
  for (const OpStat& op : ops) {
    CHECK(op.calls == 3);
    CHECK(op.self_ns <= op.total_ns);
    total += op.total_ns;
    if (&op != &ops.front()) CHECK(op.self_ns <= (&op - 1)->self_ns);  // by self time
  }
  CHECK(profiled == total);
  bool addmm = false;
  for (const OpStat& op : ops) addmm |= op.name == "aten::addmm.out";
  CHECK(addmm);
}

TEST_CASE("an ETDump cut anywhere or of another kind is refused in one line", "[pte]") {
  const std::string bytes = test::Slurp(Pte("linear.etdp"));
  for (size_t n = 0; n < bytes.size(); n += 7) {
    INFO(n);
    try {
      ReadETDump(bytes.substr(0, n), "cut.etdp");
      FAIL("a cut ETDump was read");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kFormat);
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  CHECK_THROWS_AS(ReadETDump(test::Slurp(Pte("linear.pte")), "linear.pte"), Error);
}

TEST_CASE("NumPy's files: what tsctl writes it reads back, and a cut one is refused in one line", "[pte]") {
  const DtypeInfo& f32 = *DtypeByName("float32");
  const float values[6] = {1, 2, 3, 4, 5, 6};
  const std::string npy = NpyFile(f32, {2, 3}, {reinterpret_cast<const char*>(values), sizeof values}, "x");
  CHECK(npy.size() % 64 == sizeof values % 64);  // the header pads the data to 64 bytes
  const NpyArray a = ParseNpy(npy, "x.npy");
  CHECK(a.dtype == &f32);
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  CHECK(!a.fortran);
  CHECK(a.bytes == sizeof values);
  CHECK(std::memcmp(npy.data() + a.data, values, sizeof values) == 0);
  for (size_t n = 0; n < npy.size(); ++n) {
    INFO(n);
    CHECK_THROWS_AS(ParseNpy(npy.substr(0, n), "cut.npy"), Error);
  }
  // A shape whose product overflows, and one that is no tuple of integers.
  std::string huge = npy;
  const size_t at = huge.find("(2, 3)");
  REQUIRE(at != std::string::npos);
  huge.replace(at, 6, "(9999999999, 9999999999)");
  CHECK_THROWS_AS(ParseNpy(huge, "huge.npy"), Error);
  std::string odd = npy;
  odd.replace(at, 6, "((2), 3)");
  CHECK_THROWS_AS(ParseNpy(odd, "odd.npy"), Error);
  // An .npz of two arrays reads back in order, named as numpy.savez names them.
  char dir[] = "/tmp/tsctl_npz_XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/x.npz";
  {
    std::ofstream out(path, std::ios::binary);
    out << NpzFile({{NpzName(0), npy}, {NpzName(1), npy}});
  }
  const NumpyArrays arrays = ReadNumpyFile(path);
  test::RemoveTree(dir);
  REQUIRE(arrays.size() == 2);
  CHECK(arrays[0].first == "arr_0");
  CHECK(arrays[1].first == "arr_1");
  CHECK(arrays[1].second.first.shape == std::vector<int64_t>{2, 3});
}
