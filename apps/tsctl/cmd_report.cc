// tsctl report ARCHIVE [-o FILE]: one self-contained offline HTML page about
// a TorchScript archive, a .pt2 or an ExecuTorch file, without LibTorch.
#include <memory>

#include "cli.h"
#include "tsctl/archive.h"
#include "tsctl/pte.h"
#include "tsctl/report.h"

namespace tsctl::cli {
namespace {

struct ReportFlags {
  std::string archive;
  std::string output;  // "" or "-": standard output
};

int RunReport(const ReportFlags& f, const GlobalOptions& global) {
  return Guarded("report", f.archive, global, [&] {
    std::string html;
    if (IsPteFile(f.archive)) {  // ExecuTorch: .pte, .ptd, .bpte
      html = RenderReportHtml(ReadPte(f.archive), f.archive);
    } else {
      html = RenderReportHtml(BuildReport(Archive::OpenSoundModel(f.archive, global.max_input_bytes)));
    }
    WriteOutput(f.output, html);
    return kExitOk;
  });
}

}  // namespace

RunFn BindReport(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<ReportFlags>();
  sub->add_option("archive", flags->archive,
                  "A TorchScript archive (.pt, .ptl, ...), a .pt2 archive or an ExecuTorch file (.pte, .ptd, .bpte)")
      ->required();
  sub->add_option("-o,--output", flags->output, "Write the page to FILE (atomically) instead of stdout ('-': stdout)");
  return [flags, &global] { return RunReport(*flags, global); };
}

}  // namespace tsctl::cli
