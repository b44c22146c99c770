// The table of formats (tsctl/format.h) and what picks a row: Open, and the
// pairs diff and report A B compare.
#include "tsctl/format.h"

#include <filesystem>
#include <fstream>

#include "../commands/zip_model.h"
#include "tsctl/error.h"
#include "tsctl/inspect.h"
#include "zip_formats.h"
#include "tsctl/zip_structure.h"

namespace tsctl {

extern const Format kExecuTorchFormat;   // executorch/executorch_format.cc
extern const Format kPt2Format;          // pt2/pt2_format.cc
extern const Format kTorchScriptFormat;  // torchscript/torchscript_format.cc

const std::vector<const Format*>& Formats() {
  // Their claims do not overlap (first bytes; a ZIP's records: .pt2's, or
  // TorchScript's, which takes every ZIP that is no other format's and says
  // what it is in validate's ts.kind), so the order is validate's report
  // order of their checks.
  static const std::vector<const Format*> kFormats = {&kTorchScriptFormat, &kPt2Format, &kExecuTorchFormat};
  return kFormats;
}

namespace {

// The first `n` bytes of a regular file ("" when shorter or unreadable).
std::string FileHead(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string head(n, '\0');
  in.read(head.data(), static_cast<std::streamsize>(n));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

}  // namespace

const Format* FormatOfFile(const std::string& path) {
  std::error_code ec;
  if (path == "-" || !std::filesystem::is_regular_file(path, ec)) return nullptr;  // a FIFO is never opened here
  size_t most = 0;
  for (const Format* f : Formats()) most = std::max(most, f->head_bytes);
  const std::string head = FileHead(path, most);
  for (const Format* f : Formats()) {
    if (f->claims_head && head.size() >= f->head_bytes && f->claims_head(std::string_view(head).substr(0, f->head_bytes))) {
      return f;
    }
  }
  // The tiebreak: named as a format names its files, and no ZIP (a renamed
  // archive stays what it is): that format's reader says what it starts with.
  if (head.rfind("PK", 0) == 0) return nullptr;
  const std::string ext = std::filesystem::path(path).extension().string();
  for (const Format* f : Formats()) {
    for (const char* e : f->extensions) {
      if (ext == e) return f;
    }
  }
  return nullptr;
}

const Format* FormatOfArchive(const Archive& archive) {
  const ZipModel* model = &ZipModelOf(archive);
  for (const Format* f : Formats()) {
    if (f->zip == model) return f;
  }
  return nullptr;
}

OpenedFile Open(const std::string& path, uint64_t max_input_bytes) {
  OpenedFile file;
  file.path = path;
  file.max_input_bytes = max_input_bytes;
  file.format = FormatOfFile(path);
  if (file.format) return file;
  file.archive.emplace(Archive::OpenModel(OpenFileSource(path, max_input_bytes)));
  file.format = FormatOfArchive(*file.archive);
  if (!file.format) throw Error(ErrorKind::kFormat, std::string("no format of tsctl's reads a ") + ArchiveKindName(file.archive->kind()) + " archive");
  return file;
}

void NotForFormat(const OpenedFile& file, const char* command) {
  throw Error(ErrorKind::kFormat, std::string(command) + " does not read " + file.format->name + " files");
}

const Archive& SoundArchive(const OpenedFile& file) {
  if (!file.archive) throw Error(ErrorKind::kFormat, std::string("not a ZIP archive (") + file.format->name + ")");
  RequireSoundStructure(file.archive->layout());
  return *file.archive;
}

const Format* PairReader(const DiffRequest& request) {
  for (const std::string* side : {&request.a, &request.b}) {
    const Format* f = FormatOfFile(*side);
    if (f && f->reads_pairs) return f;
  }
  return nullptr;
}

DiffResult DiffOpened(const OpenedFile& a, const OpenedFile& b, const DiffOptions& options) {
  for (const OpenedFile* side : {&a, &b}) {
    if (!side->archive) NotForFormat(*side, "diff");
  }
  return DiffArchives(*a.archive, *b.archive, options);
}

std::string ReportPairOpened(const OpenedFile& a, const OpenedFile& b, const DiffOptions& options) {
  for (const OpenedFile* side : {&a, &b}) {
    if (!side->archive) NotForFormat(*side, "report A B");
  }
  return RenderReportDiffHtml(BuildDiffReport(*a.archive, *b.archive, options));
}

std::string InspectZipArchive(const OpenedFile& file, const InspectRequest& request) {
  InspectOptions options;
  options.verify_crc = request.verify_crc;
  return Render(Inspect(SoundArchive(file), options), request.format, request.text);
}

std::string ZipArchivePage(const OpenedFile& file, const PageRequest& request) {
  ReportOptions options;
  options.path = file.path;
  options.torchscript_graph = request.graph;
  options.allow_load_hooks = request.allow_load_hooks;
  return RenderReportHtml(BuildReport(SoundArchive(file), options));
}

}  // namespace tsctl
