// libFuzzer target: `tsctl validate --no-load` (ZIP and structure checks) on
// an archive in memory, rendered as text, JSON and JUnit.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "../../lib/src/render/render_json.h"
#include "tsctl/error.h"
#include "tsctl/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tsctl::ValidateOptions options;
  options.load = false;
  options.require_meta = {"producer.name"};
  try {
    tsctl::ValidationReport report;
    report.archives.push_back(tsctl::ValidateSource(
        tsctl::MakeMemorySource(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>"), "<fuzz>", options));
    (void)tsctl::ToJson(report).dump();
    std::ostringstream text;
    tsctl::RenderText(report, text);
    (void)tsctl::RenderJUnit(report);
  } catch (const tsctl::Error&) {
  }
  return 0;
}
