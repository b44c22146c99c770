// libFuzzer target: `tsctl inspect` on an archive in memory, rendered as
// text and as JSON (the JSON must always serialize); for a .pt2 also the
// printed graph of its program.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "../../lib/src/render/render_json.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/inspect.h"
#include "tsctl/pt2.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    tsctl::Archive a =
        tsctl::Archive::OpenModel(tsctl::MakeMemorySource(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>"));
    tsctl::ArchiveInfo info = tsctl::Inspect(a);
    (void)tsctl::ToJson(info).dump();  // throws on invalid UTF-8: a finding
    std::ostringstream text;
    tsctl::RenderText(info, text);
    if (tsctl::IsPt2(a.kind())) (void)tsctl::Pt2GraphText(a, "");
  } catch (const tsctl::Error&) {
  }
  return 0;
}
