// tsctl report ARCHIVE [-o FILE]: one self-contained offline HTML page about
// a TorchScript archive, a .pt2 or an ExecuTorch file, without LibTorch.
// tsctl report A B [-o FILE]: the page of what changed from A to B (what
// tsctl diff compares), for the archive kinds diff takes.
#include <memory>
#include <optional>

#include "cli.h"
#include "tsctl/archive.h"
#include "tsctl/pte.h"
#include "tsctl/report.h"

namespace tsctl::cli {
namespace {

struct ReportFlags {
  std::string archive;
  std::string b;       // "" unless a second archive is given: report A B
  std::string output;  // "" or "-": standard output
};

int RunOne(const ReportFlags& f, const GlobalOptions& global) {
  const std::string& path = f.archive;
  return Guarded("report", path, global, [&] {
    std::string html;
    if (IsPteFile(path)) {  // ExecuTorch: .pte, .ptd, .bpte
      html = RenderReportHtml(ReadPte(path), path);
    } else {
      html = RenderReportHtml(BuildReport(Archive::OpenSoundModel(path, global.max_input_bytes)));
    }
    WriteOutput(f.output, html);
    return kExitOk;
  });
}

// Opens one side of `report A B` as tsctl diff does; an ExecuTorch file,
// which diff cannot compare, is refused by name.
int OpenSide(const std::string& path, const GlobalOptions& global, std::optional<Archive>& out) {
  return Guarded("report", path, global, [&] {
    if (IsPteFile(path)) {
      throw Error(ErrorKind::kFormat,
                  "an ExecuTorch file: report A B (like tsctl diff) compares TorchScript and .pt2 archives");
    }
    out.emplace(Archive::OpenModel(OpenFileSource(path, global.max_input_bytes)));
    return kExitOk;
  });
}

int RunDiff(const ReportFlags& f, const GlobalOptions& global) {
  std::optional<Archive> a, b;
  int status = OpenSide(f.archive, global, a);
  if (status == kExitOk) status = OpenSide(f.b, global, b);
  if (status != kExitOk) return status;
  return Guarded("report", "", global, [&] {
    WriteOutput(f.output, RenderReportDiffHtml(BuildDiffReport(*a, *b)));
    return kExitOk;  // a page was written, whether the archives differ or not
  });
}

}  // namespace

RunFn BindReport(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<ReportFlags>();
  sub->add_option("archive", flags->archive,
                  "A TorchScript archive (.pt, .ptl, ...), a .pt2 archive or an ExecuTorch file (.pte, .ptd, .bpte)")
      ->required();
  sub->add_option("b", flags->b,
                  "A second archive: a page of what changed from ARCHIVE to B, as tsctl diff compares them "
                  "(TorchScript and .pt2 archives)");
  sub->add_option("-o,--output", flags->output, "Write the page to FILE (atomically) instead of stdout ('-': stdout)");
  return [flags, &global] { return flags->b.empty() ? RunOne(*flags, global) : RunDiff(*flags, global); };
}

}  // namespace tsctl::cli
