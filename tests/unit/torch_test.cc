// Tests of the LibTorch side: these link LibTorch and the plugin's code.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <torch/script.h>

#include <filesystem>
#include <sstream>

#include "backend.h"
#include "test_util.h"
#include "tsctl/stamp.h"

namespace fs = std::filesystem;

TEST_CASE("stamped archives load in LibTorch with their extra files", "[torch][stamp]") {
  char tmpl[] = "/tmp/tsctl-torch-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  fs::path file = dir / "m.pt";
  fs::copy_file(tsctl::test::TestData("scripted_multi.pt"), file);
  tsctl::StampOptions o;
  o.set = {{"owner", "alice"}};
  o.files = {{"notes.txt", "hello"}};
  tsctl::Stamp(file.string(), o);

  torch::jit::ExtraFilesMap extra{{"producer_info.json", ""}, {"notes.txt", ""}};
  torch::jit::Module stamped = torch::jit::load(file.string(), torch::kCPU, extra);
  CHECK(extra["notes.txt"] == "hello");
  CHECK(nlohmann::json::parse(extra["producer_info.json"])["owner"] == "alice");
  torch::jit::Module original = torch::jit::load(tsctl::test::TestData("scripted_multi.pt"));
  auto a = original.named_buffers(), b = stamped.named_buffers();
  auto pa = original.named_parameters(), pb = stamped.named_parameters();
  REQUIRE(pa.size() == pb.size());
  for (auto ia = pa.begin(), ib = pb.begin(); ia != pa.end(); ++ia, ++ib) {
    CHECK((*ia).name == (*ib).name);
    CHECK(torch::equal((*ia).value, (*ib).value));
  }
  fs::remove_all(dir);
}

TEST_CASE("archives saved by tsctl carry the producer record", "[torch][stamp]") {
  tsctl::CreateTorchBackend();  // installs the export hook
  torch::jit::Module m("Tiny");
  m.register_parameter("w", torch::ones({2}), false);
  m.define(R"JIT(
    def forward(self, x):
        return x * self.w
  )JIT");
  std::stringstream buffer;
  m.save(buffer);
  torch::jit::ExtraFilesMap extra{{"producer_info.json", ""}};
  torch::jit::load(buffer, torch::kCPU, extra);
  auto producer = nlohmann::json::parse(extra["producer_info.json"]);
  CHECK(producer["written_by"] == "tsctl");
  CHECK(producer.contains("libtorch_version"));
  CHECK(producer.contains("time"));
}
