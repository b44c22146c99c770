// libFuzzer target: the pickle reader and its Python-like rendering.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tsctl/error.h"
#include "tsctl/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    tsctl::PickleFacts facts;
    tsctl::PyRef v = tsctl::ParsePickle(std::string_view(reinterpret_cast<const char*>(data), size), {}, &facts);
    (void)tsctl::Repr(v, 400);
    for (const auto& g : facts.globals) {
      size_t dot = g.rfind('.');
      (void)tsctl::IsTorchScriptGlobal(g.substr(0, dot == std::string::npos ? 0 : dot), g);
    }
  } catch (const tsctl::Error&) {
  }
  return 0;
}
