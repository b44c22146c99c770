// tsctl report ARCHIVE [-o FILE]: one self-contained offline HTML page about
// a TorchScript archive, a .pt2 or an ExecuTorch file, without LibTorch.
// tsctl report A B [-o FILE]: the page of what changed from A to B (what
// tsctl diff compares), for the archive kinds diff takes: TorchScript and
// .pt2 archives, or two ExecuTorch files.
#include <memory>
#include <optional>
#include <vector>

#include "cli.h"
#include "diff_flags.h"
#include "tsctl/format.h"
#include "tsctl/report.h"

namespace tsctl::cli {
namespace {

struct ReportFlags {
  std::string archive;
  std::string b;       // "" unless a second archive is given: report A B
  std::string output;  // "" or "-": standard output
  std::string graph = "auto";  // a TorchScript archive's graph: auto, always, never
  bool allow_load_hooks = false;  // the graph of an archive whose only finding is ts.hooks
  DiffFlags diff;      // report A B: how to compare
  std::vector<CLI::Option*> diff_options;
  CLI::Option* graph_option = nullptr;
  CLI::Option* hooks_option = nullptr;
};

int RunPage(const ReportFlags& f, const GlobalOptions& global) {
  const std::string& path = f.archive;
  return Guarded("report", path, global, [&] {
    const OpenedFile file = Open(path, global.max_input_bytes);
    PageRequest request;
    request.graph = f.graph == "always" ? ReportOptions::TorchScriptGraph::kAlways
                    : f.graph == "never" ? ReportOptions::TorchScriptGraph::kNever
                                         : ReportOptions::TorchScriptGraph::kAuto;
    request.allow_load_hooks = f.allow_load_hooks;
    WriteOutput(f.output, Need<&Format::report_page>(file, "report")(file, request));
    return kExitOk;
  });
}

int RunDiff(const ReportFlags& f, const GlobalOptions& global) {
  if (f.graph_option->count() > 0 || f.hooks_option->count() > 0) {
    return Report("report", "",
                  Error(ErrorKind::kUsage, "--graph and --allow-load-hooks apply to the page of one archive"), global);
  }
  DiffOptions options;
  int status = Guarded("report", "", global, [&] {
    options = ResolveDiffFlags(f.diff);
    return kExitOk;
  });
  if (status != kExitOk) return status;
  const DiffRequest request{.a = f.archive, .b = f.b, .options = options, .max_input_bytes = global.max_input_bytes};
  // A format that reads pairs (ExecuTorch's) compares both sides itself, so
  // the other side gets its reader's line.
  if (const Format* reader = PairReader(request)) {
    return Guarded("report", "", global, [&] {
      WriteOutput(f.output, reader->report_pair(request));
      return kExitOk;
    });
  }
  std::optional<OpenedFile> a, b;
  status = OpenDiffSide("report", f.archive, global, a);
  if (status == kExitOk) status = OpenDiffSide("report", f.b, global, b);
  if (status != kExitOk) return status;
  return Guarded("report", "", global, [&] {
    WriteOutput(f.output, ReportPairOpened(*a, *b, options));
    return kExitOk;  // a page was written, whether the archives differ or not
  });
}

// A diff flag given with one archive is a usage error.
int RunOne(const ReportFlags& f, const GlobalOptions& global) {
  for (const CLI::Option* o : f.diff_options) {
    if (o->count() > 0) {
      return Report("report", "", Error(ErrorKind::kUsage, o->get_name() + " applies to report A B (two archives)"),
                    global);
    }
  }
  return RunPage(f, global);
}

}  // namespace

RunFn BindReport(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<ReportFlags>();
  sub->add_option("archive", flags->archive,
                  "A TorchScript archive (.pt, .ptl, ...), a .pt2 archive or an ExecuTorch file (.pte, .ptd, .bpte)")
      ->required();
  sub->add_option("b", flags->b,
                  "A second archive: a page of what changed from ARCHIVE to B, as tsctl diff compares them "
                  "(TorchScript and .pt2 archives, or two ExecuTorch files)");
  sub->add_option("-o,--output", flags->output, "Write the page to FILE (atomically) instead of stdout ('-': stdout)");
  flags->diff_options = AddDiffFlags(sub, flags->diff);
  flags->graph_option =
      sub->add_option("--graph", flags->graph,
                      "A TorchScript archive's graph, drawn from LibTorch's inlined forward (a child process): auto "
                      "(archives up to 256 MiB; what stops it is a note on the page), always, never")
          ->check(CLI::IsMember({"auto", "always", "never"}))
          ->capture_default_str();
  flags->hooks_option = AddAllowLoadHooksFlag(
      sub, flags->allow_load_hooks,
      "Draw the graph of an archive whose code runs at load time (a custom __setstate__) or reads files or unchecked "
      "memory (ts.hooks); without it such an archive's page has no graph, with a note (--graph always: refused, "
      "exit 1). Other failed checks (zip.*, ts.pickle, ts.storage, ...) always keep the graph out");
  return [flags, &global] { return flags->b.empty() ? RunOne(*flags, global) : RunDiff(*flags, global); };
}

}  // namespace tsctl::cli
