#include <catch2/catch.hpp>

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "../../lib/src/render/render_json.h"
#include "../../lib/src/text/json_util.h"
#include "../../lib/src/commands/diff_internal.h"
#include "test_util.h"
#include "tsctl/diff.h"
#include "tsctl/dtype.h"
#include "tsctl/escape.h"
#include "tsctl/error.h"
#include "tsctl/pickle.h"
#include "tsctl/record_reader.h"
#include "../../lib/src/archive/storage_types.h"
#include "tsctl/text_diff.h"
#include "tsctl/zip.h"

using namespace tsctl;

namespace {

template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

ValueStats Compare(const std::string& dtype, const std::string& a, const std::string& b, double rtol = 0,
                   double atol = 0) {
  ValueStats s;
  uint64_t elem = DiffElementSize(dtype);
  REQUIRE(elem > 0);
  REQUIRE(a.size() == b.size());
  CompareElements(dtype, a.data(), b.data(), a.size() / elem, rtol, atol, s);
  return s;
}

using test::MakeZip;
using test::RawRecord;
using test::Stored;

RawRecord Deflated(const std::string& name, const std::string& data) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return {name, out, 8, Crc32(data.data(), data.size()), data.size()};
}

std::vector<RawRecord> RecordsOf(const std::string& file) {
  auto src = MakeMemorySource(test::Slurp(test::TestData(file)));
  ZipLayout layout = ReadZipLayout(*src);
  std::vector<RawRecord> out;
  for (const auto& e : layout.entries) out.push_back(Stored(e.name, ReadEntry(*src, e)));
  return out;
}

RawRecord& Record(std::vector<RawRecord>& recs, const std::string& suffix) {
  for (RawRecord& r : recs) {
    if (r.name.size() >= suffix.size() && r.name.compare(r.name.size() - suffix.size(), suffix.size(), suffix) == 0) return r;
  }
  FAIL("no record " << suffix);
  return recs[0];
}

Archive OpenFile(const std::string& name) { return Archive::Open(OpenFileSource(test::TestData(name))); }
Archive OpenBytes(const std::string& bytes) { return Archive::Open(MakeMemorySource(bytes)); }

DiffResult DiffFiles(const std::string& a, const std::string& b, DiffOptions options = {}) {
  return DiffArchives(OpenFile(a), OpenFile(b), options);
}

const TensorChange* FindTensor(const std::vector<TensorChange>& v, const std::string& name) {
  for (const TensorChange& t : v) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("diff values: float32 counts, max abs and max rel", "[diff]") {
  ValueStats s = Compare("float32", Bytes<float>({1, 2, 4, 0}), Bytes<float>({1, 2.5f, 3, 0}));
  CHECK(s.numel == 4);
  CHECK(s.differing == 2);
  CHECK(s.max_abs == Approx(1.0));
  CHECK(s.max_rel == Approx(0.25));
  CHECK_FALSE(s.nan_mismatch);
  // Within tolerance: |a-b| <= atol + rtol*|a|.
  CHECK(Compare("float32", Bytes<float>({1, 2, 4}), Bytes<float>({1, 2.5f, 3}), 0.3, 0).differing == 0);
  CHECK(Compare("float32", Bytes<float>({1, 2, 4}), Bytes<float>({1, 2.5f, 3}), 0, 0.5).differing == 1);
  // A change from zero has an infinite relative difference.
  CHECK(std::isinf(Compare("float32", Bytes<float>({0}), Bytes<float>({1})).max_rel));
}

TEST_CASE("diff values: NaN equals NaN, NaN on one side differs", "[diff]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(Compare("float32", Bytes<float>({nan, 1}), Bytes<float>({nan, 1})).differing == 0);
  ValueStats s = Compare("float32", Bytes<float>({nan, 1}), Bytes<float>({0, 1}));
  CHECK(s.differing == 1);
  CHECK(s.nan_mismatch);
  CHECK(Compare("float64", Bytes<double>({1e300, -2}), Bytes<double>({1e300, -2.5})).max_abs == Approx(0.5));
}

TEST_CASE("diff values: float16 and bfloat16 are decoded", "[diff]") {
  // float16: 1.0 = 0x3c00, 1.5 = 0x3e00, 65504 = 0x7bff, subnormal 2^-24 = 0x0001.
  ValueStats h = Compare("float16", Bytes<uint16_t>({0x3c00, 0x7bff, 0x0001}), Bytes<uint16_t>({0x3e00, 0x7bff, 0x0000}));
  CHECK(h.differing == 2);
  CHECK(h.max_abs == Approx(0.5));
  CHECK(h.max_rel == Approx(1.0));  // 2^-24 -> 0
  // bfloat16: 1.0 = 0x3f80, 2.0 = 0x4000, -4.0 = 0xc080.
  ValueStats b = Compare("bfloat16", Bytes<uint16_t>({0x3f80, 0xc080}), Bytes<uint16_t>({0x4000, 0xc080}));
  CHECK(b.differing == 1);
  CHECK(b.max_abs == Approx(1.0));
}

TEST_CASE("diff values: integers, bool and quantized storages", "[diff]") {
  CHECK(Compare("int8", Bytes<int8_t>({-128, 5}), Bytes<int8_t>({127, 5})).max_abs == Approx(255));
  CHECK(Compare("uint8", Bytes<uint8_t>({0, 200}), Bytes<uint8_t>({0, 100})).differing == 1);
  CHECK(Compare("int16", Bytes<int16_t>({-3, 3}), Bytes<int16_t>({-3, 4})).differing == 1);
  CHECK(Compare("int32", Bytes<int32_t>({1 << 30}), Bytes<int32_t>({-(1 << 30)})).max_abs == Approx(2147483648.0));
  // int64 values one apart beyond 2^53 still differ although their doubles are equal.
  const int64_t big = (int64_t{1} << 60) + 1;
  ValueStats l = Compare("int64", Bytes<int64_t>({big}), Bytes<int64_t>({big + 1}));
  CHECK(l.differing == 1);
  CHECK(l.max_abs >= 1);
  CHECK(Compare("bool", Bytes<uint8_t>({0, 1, 1}), Bytes<uint8_t>({0, 1, 2})).differing == 0);  // any nonzero is true
  CHECK(Compare("bool", Bytes<uint8_t>({0, 1}), Bytes<uint8_t>({1, 1})).differing == 1);
  CHECK(Compare("qint8", Bytes<int8_t>({-1, 2}), Bytes<int8_t>({1, 2})).max_abs == Approx(2));
  CHECK(Compare("quint8", Bytes<uint8_t>({255}), Bytes<uint8_t>({0})).max_abs == Approx(255));
  CHECK(Compare("qint32", Bytes<int32_t>({7, 8}), Bytes<int32_t>({7, 9})).differing == 1);
  CHECK(Compare("quint4x2", Bytes<uint8_t>({0x12}), Bytes<uint8_t>({0x21})).differing == 1);
}

TEST_CASE("diff values: complex numbers by magnitude", "[diff]") {
  ValueStats c = Compare("complex64", Bytes<float>({3, 4, 1, 1}), Bytes<float>({0, 0, 1, 1}));
  CHECK(c.differing == 1);
  CHECK(c.max_abs == Approx(5));
  CHECK(c.max_rel == Approx(1));
  CHECK(Compare("complex128", Bytes<double>({1, 2}), Bytes<double>({1, 2.5})).max_abs == Approx(0.5));
}

TEST_CASE("diff values: many equal blocks and one change deep inside", "[diff]") {
  std::vector<float> a(100000, 0.5f), b = a;
  b[77777] = 0.75f;
  ValueStats s;
  CompareElements("float32", reinterpret_cast<const char*>(a.data()), reinterpret_cast<const char*>(b.data()),
                  a.size(), 0, 0, s);
  CHECK(s.numel == 100000);
  CHECK(s.differing == 1);
  CHECK(s.max_abs == Approx(0.25));
  CHECK_THROWS_AS(CompareElements("float8", nullptr, nullptr, 0, 0, 0, s), Error);
}

TEST_CASE("every c10 dtype has one name, size and comparison", "[diff][dtype]") {
  // torch.jit.save names a tensor's storage c10's name + "Storage": 2.x's
  // uint16/32/64 and float8 buffers were "torch.UInt16Storage" dtypes of 0 B
  // in inspect, and a ts.globals FAIL ("globals TorchScript never writes").
  for (const DtypeInfo& d : AllDtypes()) {
    INFO(d.c10);
    const StorageDtype* s = DtypeOfStorage(std::string(d.c10) + "Storage");
    REQUIRE(s);
    CHECK(std::string(s->name) == d.name);
    CHECK(s->size == d.size);
    CHECK(IsTorchScriptGlobal("torch", std::string(d.c10) + "Storage"));
    CHECK(DiffElementSize(d.name) == d.size);  // every dtype's values are compared
    CHECK(DtypeByC10(d.c10) == &d);
    CHECK(DtypeByName(d.name) == &d);
  }
  CHECK(DtypeOfStorage("Float8Storage") == nullptr);
  // Row i is ScalarType value i (c10's and ExecuTorch's); .pt2 numbers its own.
  CHECK(std::string(DtypeByValue(6)->c10) == "Float");
  CHECK(std::string(DtypeByValue(29)->name) == "uint64");
  CHECK(DtypeByValue(-1) == nullptr);
  CHECK(std::string(DtypeByPt2(7)->name) == "float32");
  CHECK(std::string(DtypeByPt2(28)->name) == "uint16");
  CHECK(std::string(DtypeByPt2(35)->name) == "uint64");
  CHECK(DtypeByPt2(0) == nullptr);
  std::set<int> pt2;
  for (const DtypeInfo& d : AllDtypes()) {
    if (d.pt2) CHECK(pt2.insert(d.pt2).second);
  }
  CHECK(pt2.size() == 21);
  CHECK_FALSE(IsTorchScriptGlobal("torch", "os"));
}

TEST_CASE("diff values: unsigned and float8 dtypes by value", "[diff][dtype]") {
  ValueStats u = Compare("uint16", Bytes<uint16_t>({1, 60000}), Bytes<uint16_t>({1, 60001}));
  CHECK(u.differing == 1);
  CHECK(u.max_abs == 1);
  ValueStats u64 = Compare("uint64", Bytes<uint64_t>({UINT64_MAX}), Bytes<uint64_t>({UINT64_MAX - 1}));
  CHECK(u64.differing == 1);
  // float8_e4m3fn: 0x38 = 1.0, 0x40 = 2.0, 0x7f = NaN; e5m2: 0x3c = 1.0, 0x7c = inf.
  ValueStats f = Compare("float8_e4m3fn", Bytes<uint8_t>({0x38, 0x40}), Bytes<uint8_t>({0x38, 0x41}));
  CHECK(f.differing == 1);
  CHECK(f.max_abs == Approx(0.25));  // 2.0 -> 2.25
  CHECK(Compare("float8_e4m3fn", Bytes<uint8_t>({0x7f}), Bytes<uint8_t>({0x7f})).differing == 0);
  ValueStats e = Compare("float8_e5m2", Bytes<uint8_t>({0x3c}), Bytes<uint8_t>({0x3d}), 0.5, 0);
  CHECK(e.differing == 0);  // 1.0 -> 1.25 within rtol 0.5
  CHECK(e.max_abs == Approx(0.25));
  CHECK(Compare("float8_e5m2", Bytes<uint8_t>({0x3c}), Bytes<uint8_t>({0x7c})).differing == 1);
  // fnuz: 0x80 is NaN; e4m3fnuz's 1.0 is 0x40 (bias 8).
  CHECK(Compare("float8_e4m3fnuz", Bytes<uint8_t>({0x80}), Bytes<uint8_t>({0x40})).nan_mismatch);
  CHECK(Compare("float8_e8m0fnu", Bytes<uint8_t>({127}), Bytes<uint8_t>({128})).max_abs == Approx(1.0));  // 1 -> 2
}

TEST_CASE("text diff: unified hunks with context", "[diff]") {
  CHECK(UnifiedDiff("a\nb\nc\n", "a\nb\nc\n").empty());
  CHECK(UnifiedDiff("a\nb\nc\n", "a\nB\nc\n") == "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  CHECK(UnifiedDiff("", "x\n") == "@@ -0,0 +1 @@\n+x\n");
  CHECK(UnifiedDiff("x\ny\n", "y\n") == "@@ -1,2 +1 @@\n-x\n y\n");
  // A last line without a newline compares equal to one with.
  CHECK(UnifiedDiff("a\nb", "a\nb\n").empty());
  // Far-apart changes make separate hunks; context 0 shows only changes.
  std::string a, b;
  for (int i = 0; i < 20; ++i) {
    a += std::to_string(i) + "\n";
    b += (i == 2 || i == 17 ? "x" : std::to_string(i)) + "\n";
  }
  CHECK(UnifiedDiff(a, b, 1) == "@@ -2,3 +2,3 @@\n 1\n-2\n+x\n 3\n@@ -17,3 +17,3 @@\n 16\n-17\n+x\n 18\n");
  CHECK(UnifiedDiff(a, b, 0) == "@@ -3 +3 @@\n-2\n+x\n@@ -18 +18 @@\n-17\n+x\n");
  // Changes closer than twice the context share one hunk.
  CHECK(UnifiedDiff(a, b, 8).find("\n@@") == std::string::npos);
  CHECK(UnifiedDiff(a, b, 6).find("\n@@") != std::string::npos);
}

TEST_CASE("text diff: minimal edit script, and a bounded fallback", "[diff]") {
  // Myers finds the shortest script: 2 deletions and 2 insertions here.
  std::string d = UnifiedDiff("a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n", 0);
  size_t minus = 0, plus = 0;
  for (std::string_view line : SplitLines(d)) {
    if (line[0] == '-') ++minus;
    if (line[0] == '+') ++plus;
  }
  CHECK(minus + plus == 5);  // D = 5 for Myers' own example
  // Past max_edits: one hunk replacing the middle, still correct.
  std::string f = UnifiedDiff("a\nb\nc\n", "x\ny\nz\n", 3, 2);
  CHECK(f == "@@ -1,3 +1,3 @@\n-a\n-b\n-c\n+x\n+y\n+z\n");
}

TEST_CASE("json diff: changes by JSON pointer", "[diff]") {
  auto a = nlohmann::json::parse(R"({"v": 1, "tags": ["x", "y"], "a/b": {"k~": 1}, "gone": null})");
  auto b = nlohmann::json::parse(R"({"v": 2, "tags": ["x"], "a/b": {"k~": 2}, "new": [1]})");
  std::vector<JsonChange> c = diff_internal::DiffJson(a, b);
  REQUIRE(c.size() == 5);
  // nlohmann's objects iterate in key order.
  CHECK(c[0].pointer == "/a~1b/k~0");
  CHECK(c[0].a == "1");
  CHECK(c[0].b == "2");
  CHECK((c[1].pointer == "/gone" && c[1].kind == ChangeKind::kRemoved));
  CHECK((c[2].pointer == "/tags/1" && c[2].kind == ChangeKind::kRemoved && c[2].a == "\"y\""));
  CHECK((c[3].pointer == "/v" && c[3].kind == ChangeKind::kChanged));
  CHECK((c[4].pointer == "/new" && c[4].kind == ChangeKind::kAdded && c[4].b == "[1]"));
  CHECK(diff_internal::DiffJson(a, a).empty());
}

TEST_CASE("record reader: stored and deflated records read in pieces", "[diff]") {
  std::string data;
  for (int i = 0; i < 300000; ++i) data += static_cast<char>('a' + i % 7);
  std::string zip = MakeZip({Stored("s", data), Deflated("d", data)});
  auto src = MakeMemorySource(zip);
  ZipLayout layout = ReadZipLayout(*src);
  for (const ZipEntry& e : layout.entries) {
    RecordReader r(*src, e);
    r.Skip(1000);
    std::string got(5000, '\0');
    r.ReadExactly(got.data(), got.size());
    CHECK(got == data.substr(1000, 5000));
    r.Skip(data.size() - 6000 - 10);
    std::string tail(100, '\0');
    CHECK(r.Read(tail.data(), tail.size()) == 10);
    CHECK(tail.substr(0, 10) == data.substr(data.size() - 10));
    CHECK(r.Read(tail.data(), tail.size()) == 0);
    CHECK_THROWS_AS(r.ReadExactly(tail.data(), 1), Error);
  }
}

TEST_CASE("diff: identical re-save is equal; record bytes are left to the sections", "[diff]") {
  DiffResult r = DiffFiles("diff/base.pt", "diff/resaved.pt");
  CHECK(r.Equal());
  CHECK_FALSE(r.formats_differ);
  // data.pkl's bytes differ, but the module tree it holds does not.
  bool data_pkl = false;
  for (const RecordChange& c : r.records) {
    if (c.name == "data.pkl") {
      data_pkl = true;
      CHECK_FALSE(c.counts);
      CHECK(c.covered_by == "modules");
    }
  }
  CHECK(data_pkl);
  CHECK(DiffFiles("diff/base.pt", "diff/base.pt").Equal());
}

TEST_CASE("diff: one weight element changed", "[diff]") {
  DiffResult r = DiffFiles("diff/base.pt", "diff/weight.pt");
  CHECK_FALSE(r.Equal());
  REQUIRE(r.parameters.size() == 1);
  const TensorChange& t = r.parameters[0];
  CHECK(t.name == "head.weight");
  CHECK(t.role == "parameter");
  CHECK(t.values_compared);
  CHECK(t.values.numel == 24);
  CHECK(t.values.differing == 1);
  CHECK(t.values.max_abs == Approx(0.5).epsilon(1e-6));
  CHECK_FALSE(r.Section(DiffSection::kParameters).equal);
  CHECK(r.Section(DiffSection::kCode).equal);
  CHECK(r.Section(DiffSection::kRecords).equal);  // data/4 changed, covered by parameters
  // Tolerances large enough make it equal.
  DiffOptions loose;
  loose.atol = 0.5;
  CHECK(DiffFiles("diff/base.pt", "diff/weight.pt", loose).Equal());
  DiffOptions only;
  for (bool& on : only.sections) on = false;
  only.sections[static_cast<int>(DiffSection::kCode)] = true;
  DiffResult c = DiffFiles("diff/base.pt", "diff/weight.pt", only);
  CHECK(c.Equal());
  CHECK_FALSE(c.Section(DiffSection::kParameters).compared);
}

TEST_CASE("diff: an operator added to forward shows in the code", "[diff]") {
  DiffResult r = DiffFiles("diff/base.pt", "diff/op_added.pt");
  CHECK_FALSE(r.Equal());
  REQUIRE(r.code.size() == 1);
  CHECK(r.code[0].class_name == "__torch__.DiffNet");
  CHECK(r.code[0].method == "forward");
  CHECK(r.code[0].unified_diff.find("+") != std::string::npos);
  CHECK(r.code[0].unified_diff.find("torch.sigmoid") != std::string::npos);
  CHECK(r.parameters.empty());
  // The static operator list sees the new call.
  CHECK(r.Section(DiffSection::kOperators).compared);
  CHECK(r.operators_added == std::vector<std::string>{"aten::add", "aten::sigmoid"});  // torch.add(y, torch.sigmoid(y))
  CHECK(r.operators_removed.empty());
}

TEST_CASE("diff: metadata changes by JSON pointer and text diff", "[diff]") {
  DiffResult r = DiffFiles("diff/base.pt", "diff/metadata.pt");
  REQUIRE(r.extra.size() == 2);
  const ExtraChange& meta = r.extra[0];
  CHECK(meta.name == "meta.json");
  CHECK(meta.content_type == "json");
  REQUIRE(meta.json_changes.size() == 2);
  CHECK((meta.json_changes[0].pointer == "/version" && meta.json_changes[0].a == "1" && meta.json_changes[0].b == "2"));
  CHECK((meta.json_changes[1].pointer == "/owner" && meta.json_changes[1].kind == ChangeKind::kAdded));
  CHECK(r.extra[1].name == "notes.txt");
  CHECK(r.extra[1].content_type == "text");
  CHECK(r.extra[1].unified_diff.find("+Archive for tsctl diff tests, second edition.") != std::string::npos);
  DiffOptions no_extra;
  no_extra.sections[static_cast<int>(DiffSection::kExtra)] = false;
  CHECK(DiffFiles("diff/base.pt", "diff/metadata.pt", no_extra).Equal());
}

TEST_CASE("diff: a layer's shape changed", "[diff]") {
  DiffResult r = DiffFiles("diff/base.pt", "diff/shape.pt");
  const TensorChange* w = FindTensor(r.parameters, "encoder.fc.weight");
  REQUIRE(w);
  CHECK(w->shape_a == std::vector<int64_t>{8, 4});
  CHECK(w->shape_b == std::vector<int64_t>{6, 4});
  CHECK_FALSE(w->values_compared);
  CHECK(w->note.find("shape [8, 4] -> [6, 4]") != std::string::npos);
  REQUIRE(FindTensor(r.parameters, "encoder.scale"));
  CHECK(FindTensor(r.parameters, "encoder.scale")->role == "buffer");
  CHECK_FALSE(FindTensor(r.parameters, "steps"));  // unchanged
}

TEST_CASE("diff: a submodule renamed", "[diff]") {
  DiffResult r = DiffFiles("diff/base.pt", "diff/renamed.pt");
  bool removed = false, added = false;
  for (const ModuleChange& m : r.modules) {
    removed |= m.path == "head" && m.kind == ChangeKind::kRemoved && m.what == "submodule";
    added |= m.path == "classifier" && m.kind == ChangeKind::kAdded && m.what == "submodule";
  }
  CHECK(removed);
  CHECK(added);
  REQUIRE(FindTensor(r.parameters, "head.weight"));
  CHECK(FindTensor(r.parameters, "head.weight")->kind == ChangeKind::kRemoved);
  CHECK(FindTensor(r.parameters, "classifier.weight")->kind == ChangeKind::kAdded);
}

TEST_CASE("diff: different formats are said to differ", "[diff]") {
  DiffResult r = DiffFiles("traced_cnn.pt", "mobile.ptl");
  CHECK(r.formats_differ);
  CHECK_FALSE(r.Equal());
  bool layout = false;
  for (const FieldChange& f : r.format) layout |= f.field == "layout" && f.b == "mobile (bytecode.pkl)";
  CHECK(layout);
  CHECK(DiffFiles("quantized.pt", "quantized.pt").Equal());
  CHECK(DiffFiles("mobile.ptl", "mobile.ptl").Equal());
}

TEST_CASE("diff: deflated records, --exact, and views past their storage", "[diff]") {
  std::vector<RawRecord> recs = RecordsOf("diff/base.pt");
  std::vector<RawRecord> deflated;
  for (const RawRecord& r : recs) deflated.push_back(Deflated(r.name, r.data));
  Archive a = OpenBytes(MakeZip(recs));
  Archive d = OpenBytes(MakeZip(deflated));
  // Same contents, other compression: only the record layout differs.
  DiffResult r = DiffArchives(a, d);
  CHECK(r.parameters.empty());
  CHECK_FALSE(r.Section(DiffSection::kRecords).equal);
  DiffOptions exact;
  exact.exact = true;
  DiffOptions no_records = exact;
  no_records.sections[static_cast<int>(DiffSection::kRecords)] = false;
  CHECK(DiffArchives(a, d, no_records).Equal());

  // One element of head.weight (data/4, 3x8 float32) changed, then deflated.
  std::vector<RawRecord> changed = recs;
  RawRecord& w = Record(changed, "/data/4");
  float v;
  std::memcpy(&v, w.data.data() + 4 * 13, 4);
  v += 2;
  std::memcpy(w.data.data() + 4 * 13, &v, 4);
  w = Deflated(w.name, w.data);
  DiffResult c = DiffArchives(a, OpenBytes(MakeZip(changed)), no_records);
  REQUIRE(c.parameters.size() == 1);
  CHECK(c.parameters[0].values.differing == 1);
  CHECK(c.parameters[0].values.max_abs == Approx(2));

  // A storage cut short: the view lies past it, said in a note, no crash.
  std::vector<RawRecord> cut = recs;
  RawRecord& s = Record(cut, "/data/4");
  s = Stored(s.name, s.data.substr(0, 8));
  DiffResult t = DiffArchives(a, OpenBytes(MakeZip(cut)));
  const TensorChange* tw = FindTensor(t.parameters, "head.weight");
  REQUIRE(tw);
  CHECK_FALSE(tw->values_compared);
  CHECK(tw->note.find("lies past its storage record in B") != std::string::npos);
}

TEST_CASE("diff: renderers escape archive strings and agree", "[diff]") {
  DiffResult r = DiffFiles("diff/base.pt", "diff/weight.pt");
  r.path_b = "evil\x1b[31m\xff.pt";
  std::ostringstream text;
  RenderDiffText(r, text);
  CHECK(text.str().find('\x1b') == std::string::npos);
  CHECK(text.str().find("evil\\x1b[31m\\xff.pt") != std::string::npos);
  CHECK(text.str().find("result: different (parameters)") != std::string::npos);
  nlohmann::json j = ToJson(r);
  CHECK(j["schema_version"] == kDiffSchemaVersion);
  CHECK(j["equal"] == false);
  CHECK(j["sections"]["parameters"]["changes"].size() == 1);
  CHECK(j["sections"]["parameters"]["changes"][0]["values"]["differing"] == 1);
  CHECK(j["sections"]["operators"]["compared"] == true);
  CHECK(j["sections"]["operators"]["equal"] == true);
  // Invalid UTF-8 is kept as \xNN, as inspect keeps it (one DumpJson for
  // every command), never dropped or replaced by U+FFFD; the escape byte is
  // JSON's \u001b.
  const std::string dumped = DumpJson(j);
  CHECK(dumped.find(R"("path":"evil\u001b[31m\\xff.pt")") != std::string::npos);
  CHECK(dumped.find("\xef\xbf\xbd") == std::string::npos);
  CHECK(nlohmann::json::parse(dumped)["b"]["path"] == "evil\x1b[31m\\xff.pt");
}

TEST_CASE("diff: section names", "[diff]") {
  CHECK(ParseDiffSection("extra") == DiffSection::kExtra);
  CHECK(std::string(DiffSectionName(DiffSection::kParameters)) == "parameters");
  try {
    ParseDiffSection("weights");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    CHECK(std::string(e.what()).find("parameters") != std::string::npos);
  }
}

TEST_CASE("diff: --ignore-mangle leaves ___torch_mangle_N namespaces out", "[diff]") {
  DiffResult plain = DiffFiles("diff/base.pt", "diff/shape.pt");
  bool mangled = false;
  for (const CodeChange& c : plain.code) mangled |= c.class_name == "__torch__.torch.nn.modules.linear.___torch_mangle_0.Linear";
  CHECK(mangled);
  DiffOptions options;
  options.ignore_mangle = true;
  DiffResult r = DiffFiles("diff/base.pt", "diff/shape.pt", options);
  REQUIRE(r.code.size() == 2);
  // Both Linear classes now share a name: matched in record order.
  CHECK(r.code[0].class_name == "__torch__.torch.nn.modules.linear.Linear");
  CHECK(r.code[1].class_name == "__torch__.torch.nn.modules.linear.Linear#2");
  CHECK(r.code[1].unified_diff.find("+  in_features : Final[int] = 6") != std::string::npos);
}

namespace {

// `s` with every `from` replaced by `to`.
std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

bool IsCode(const RawRecord& r) {
  return r.name.find("/code/") != std::string::npos && r.name.size() > 3 && r.name.compare(r.name.size() - 3, 3, ".py") == 0;
}

}  // namespace

TEST_CASE("diff: classes match modulo ___torch_mangle_N, code compared with A's names read as B's", "[diff]") {
  std::vector<RawRecord> recs = RecordsOf("diff/base.pt");
  // B: the same model, its ___torch_mangle_0 numbered 7 (names, code, pickles).
  std::vector<RawRecord> renumbered;
  for (const RawRecord& r : recs) {
    renumbered.push_back(Stored(ReplaceAll(r.name, "___torch_mangle_0", "___torch_mangle_7"),
                                ReplaceAll(r.data, "___torch_mangle_0", "___torch_mangle_7")));
  }
  Archive a = OpenBytes(MakeZip(recs));
  DiffResult same = DiffArchives(a, OpenBytes(MakeZip(renumbered)));
  CHECK(same.code.empty());
  CHECK(same.Section(DiffSection::kCode).equal);

  // A real change in the renumbered class is listed once, with B's name.
  RawRecord& head = Record(renumbered, "linear/___torch_mangle_7.py");
  head = Stored(head.name, ReplaceAll(head.data, "out_features : Final[int] = 3", "out_features : Final[int] = 4"));
  DiffResult one = DiffArchives(a, OpenBytes(MakeZip(renumbered)));
  REQUIRE(one.code.size() == 1);
  CHECK(one.code[0].class_name == "__torch__.torch.nn.modules.linear.___torch_mangle_0.Linear");
  CHECK(one.code[0].class_b == "__torch__.torch.nn.modules.linear.___torch_mangle_7.Linear");
  CHECK(one.code[0].method == "(declarations)");
  CHECK(one.code[0].unified_diff.find("+  out_features : Final[int] = 4") != std::string::npos);
}

TEST_CASE("diff: swapped numbers are matched by code, and a swapped reference still differs", "[diff]") {
  // testdata/diff/renumbered.pt: Linear(4,8) is ___torch_mangle_0 (base: unnumbered) and
  // Linear(8,3) ___torch_mangle_1 (base: ___torch_mangle_0): matching by name alone pairs the wrong ones.
  DiffOptions code_only;
  for (bool& s : code_only.sections) s = false;
  code_only.sections[static_cast<int>(DiffSection::kCode)] = true;
  DiffResult r = DiffFiles("diff/base.pt", "diff/renumbered.pt", code_only);
  CHECK(r.code.empty());
  CHECK(r.Equal());
  // Every section: the modules' types are the same modulo the numbers too.
  DiffResult all = DiffFiles("diff/base.pt", "diff/renumbered.pt");
  CHECK(all.modules.empty());
  CHECK(all.Equal());

  // Encoder.fc pointing at the other Linear is a real difference.
  std::vector<RawRecord> recs = RecordsOf("diff/renumbered.pt");
  RawRecord& top = Record(recs, "/code/__torch__.py");
  top = Stored(top.name, ReplaceAll(top.data, "fc : __torch__.torch.nn.modules.linear.___torch_mangle_0.Linear",
                                    "fc : __torch__.torch.nn.modules.linear.___torch_mangle_1.Linear"));
  DiffResult swapped = DiffArchives(OpenFile("diff/base.pt"), OpenBytes(MakeZip(recs)), code_only);
  REQUIRE_FALSE(swapped.code.empty());
  CHECK(swapped.code[0].class_name == "__torch__.Encoder");
}

TEST_CASE("diff: format 1's op_version_set line is not code, module-level code is never a class", "[diff]") {
  std::vector<RawRecord> recs = RecordsOf("diff/base.pt");
  std::vector<RawRecord> old = recs;
  for (RawRecord& r : old) {
    if (IsCode(r)) r = Stored(r.name, "op_version_set = 1\n" + r.data);
  }
  DiffResult r = DiffArchives(OpenBytes(MakeZip(old)), OpenBytes(MakeZip(recs)));
  CHECK(r.code.empty());
  CHECK(r.Section(DiffSection::kCode).equal);

  // Other module-level lines are compared, as a module's declarations.
  for (RawRecord& x : old) {
    if (IsCode(x)) x = Stored(x.name, "some_global = 1\n" + x.data);
  }
  DiffResult m = DiffArchives(OpenBytes(MakeZip(old)), OpenBytes(MakeZip(recs)));
  REQUIRE_FALSE(m.code.empty());
  for (const CodeChange& c : m.code) {
    CHECK(c.method == "(declarations)");
    CHECK(c.kind == ChangeKind::kRemoved);
  }
}
