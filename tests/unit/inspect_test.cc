#include <catch2/catch.hpp>

#include <sstream>

#include "../../lib/src/render/render_json.h"
#include "test_util.h"
#include "tsctl/code.h"
#include "tsctl/error.h"
#include "tsctl/inspect.h"

using namespace tsctl;

namespace {

ArchiveInfo InspectFile(const std::string& name, InspectOptions options = {}) {
  Archive a = Archive::Open(OpenFileSource(test::TestData(name)));
  return Inspect(a, options);
}

const TensorInfo* FindTensor(const ModuleInfo& m, const std::string& name) {
  for (const TensorInfo& t : m.tensors) {
    if (t.name == name) return &t;
  }
  for (const ModuleInfo& c : m.children) {
    if (const TensorInfo* t = FindTensor(c, name)) return t;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("inspect: module tree, parameters and buffers", "[inspect]") {
  ArchiveInfo info = InspectFile("scripted_multi.pt");
  REQUIRE(info.module);
  CHECK(info.module->type == "__torch__.MultiModel");
  const TensorInfo* w = FindTensor(*info.module, "head.weight");
  REQUIRE(w);
  CHECK(w->role == "parameter");
  CHECK(w->dtype == "float32");
  CHECK(w->shape == std::vector<int64_t>{3, 4});
  CHECK(w->bytes == 48);
  CHECK(w->device == "cpu");
  const TensorInfo* gain = FindTensor(*info.module, "block.gain");
  REQUIRE(gain);
  CHECK(gain->role == "buffer");
  bool has_dict = false;
  for (const AttributeInfo& a : info.module->attributes) has_dict |= a.name == "label_to_id" && a.type == "Dict[str, int]";
  CHECK(has_dict);
  uint64_t sum = 0;
  for (const TotalInfo& t : info.totals) sum += t.bytes;
  CHECK(sum == info.tensor_bytes);
}

TEST_CASE("inspect: classes and methods come from code records", "[inspect]") {
  ArchiveInfo info = InspectFile("scripted_multi.pt");
  bool found = false;
  for (const ClassInfo& c : info.classes) {
    if (c.qualified_name != "__torch__.MultiModel") continue;
    found = true;
    CHECK(std::count(c.methods.begin(), c.methods.end(), "predict") == 1);
    CHECK(std::count(c.methods.begin(), c.methods.end(), "describe") == 1);
  }
  CHECK(found);
}

TEST_CASE("inspect: every extra/ record, with JSON and text content", "[inspect]") {
  ArchiveInfo info = InspectFile("with_extra.pt");
  REQUIRE(info.extra.size() == 3);
  std::map<std::string, std::string> types;
  for (const ExtraInfo& x : info.extra) types[x.name] = x.content_type;
  CHECK(types["producer_info.json"] == "json");
  CHECK(types["notes.txt"] == "text");
  CHECK(types["blob.bin"] == "binary");
  nlohmann::json j = ToJson(info);
  CHECK(j["schema_version"] == kInspectSchemaVersion);
  for (const auto& x : j["extra"]) {
    if (x["name"] == "producer_info.json") CHECK(x["content"].is_object());
  }
}

TEST_CASE("inspect: tensor data is not read unless --verify", "[inspect]") {
  ArchiveInfo quick = InspectFile("bad/crc_mismatch.pt");
  ArchiveInfo full = InspectFile("bad/crc_mismatch.pt", InspectOptions{true});
  auto count = [](const ArchiveInfo& i, const std::string& status) {
    return std::count_if(i.records.begin(), i.records.end(), [&](const RecordInfo& r) { return r.crc_status == status; });
  };
  CHECK(count(quick, "mismatch") == 0);
  CHECK(count(full, "mismatch") == 1);
  CHECK(count(full, "unchecked") == 0);
}

TEST_CASE("inspect: quantized tensors and mobile bytecode", "[inspect]") {
  ArchiveInfo q = InspectFile("quantized_static.pt");
  bool any_quantized = false;
  std::function<void(const ModuleInfo&)> walk = [&](const ModuleInfo& m) {
    for (const TensorInfo& t : m.tensors) any_quantized |= t.quantized;
    for (const ModuleInfo& c : m.children) walk(c);
  };
  REQUIRE(q.module);
  walk(*q.module);
  CHECK(any_quantized);
  ArchiveInfo m = InspectFile("mobile.ptl");
  CHECK(m.format.has_bytecode);
  CHECK(m.format.bytecode_version);
  CHECK(!m.format.bytecode_methods.empty());
}

TEST_CASE("inspect: text rendering mentions every record", "[inspect]") {
  ArchiveInfo info = InspectFile("traced_cnn.pt");
  std::ostringstream out;
  RenderText(info, out);
  for (const RecordInfo& r : info.records) CHECK(out.str().find(r.name) != std::string::npos);
}

TEST_CASE("code: stored source by module and by class", "[code]") {
  Archive a = Archive::Open(OpenFileSource(test::TestData("scripted_multi.pt")));
  std::string all = StoredCode(a, {});
  CHECK(all.find("# code/__torch__.py\n") != std::string::npos);
  std::string block = StoredCode(a, {"", "Block"});
  CHECK(block.rfind("class Block(Module):", 0) == 0);
  CHECK(block.find("class MultiModel") == std::string::npos);
  CHECK_THROWS_AS(StoredCode(a, {"__torch__.nope", ""}), Error);
}
