// .pt2 archives (torch.export.save's exported programs, AOTInductor
// packages, the early serialized_exported_program.json layout): their row of
// tsctl/format.h. Read without LibTorch; run (validate, bench) by a LibTorch
// 2.x build.
#include "../../commands/validate_internal.h"
#include "../../commands/zip_model.h"
#include "../zip_formats.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/format.h"
#include "tsctl/pt2.h"
#include "tsctl/zip_structure.h"

namespace tsctl {
namespace {

// A program's graph, printed from its JSON as Python's print(ep.graph).
std::string Pt2Graph(const OpenedFile& file, const GraphOptions& options, OutputFormat) {
  const Archive& archive = SoundArchive(file);
  if (options.inlined || options.frozen || options.format == GraphOptions::Format::kDot) {
    throw Error(ErrorKind::kUsage, "--inlined, --frozen and --format dot apply to TorchScript archives, not to a .pt2");
  }
  return Pt2GraphText(archive, options.method == "forward" ? "" : options.method);
}

std::string Pt2Code(const OpenedFile& file, const CodeQuery&) {
  const Archive& archive = SoundArchive(file);
  throw Error(ErrorKind::kFormat, std::string("a .pt2 archive (") + ArchiveKindName(archive.kind()) +
                                      ") holds no TorchScript code: `tsctl graph` prints its program, "
                                      "`tsctl inspect` describes it");
}

}  // namespace

extern const Format kPt2Format;
const Format kPt2Format = {
    .name = "pt2",
    .extensions = {},
    .zip = &kPt2Model,
    .inspect = InspectZipArchive,
    .graph = Pt2Graph,
    .stored_code = Pt2Code,
    .report_page = ZipArchivePage,
    .checks = Pt2CheckRows(),
    .run = Pt2Run,
    .compat = Pt2Needs,
};

}  // namespace tsctl
