// The LibTorch plugin is refused when its ABI version differs from tsctl's.
// Its own executable: the plugin is loaded once per process.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cstdlib>

#include "plugin_abi.h"
#include "tsctl/error.h"
#include "tsctl/torch_backend.h"

TEST_CASE("a plugin of another ABI version is refused in one line", "[plugin]") {
  ::setenv("TSCTL_TORCH_PLUGIN", TSCTL_FAKE_PLUGIN, 1);
  try {
    tsctl::GetBuildInfo();
    FAIL("the plugin was accepted");
  } catch (const tsctl::Error& e) {
    CHECK(e.kind() == tsctl::ErrorKind::kUnavailable);
    std::string what = e.what();
    CHECK(what.find("has ABI version 999, this tsctl needs " + std::to_string(tsctl::kTorchPluginAbi)) != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}
