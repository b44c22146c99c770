// tsctl diff A B: what changed between two archives, without LibTorch.
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli.h"
#include "diff_flags.h"
#include "tsctl/escape.h"
#include "tsctl/diff.h"
#include "tsctl/format.h"

namespace tsctl::cli {
namespace {

struct DiffCommandFlags {
  std::string a, b;
  OutputFormat format = OutputFormat::kText;
  bool quiet = false;
  DiffFlags diff;
};

// Prints `result` as asked; exit 0 when the two are equal, 1 when not.
int Report(const DiffCommandFlags& f, const DiffResult& result) {
  if (!f.quiet) {
    std::cout << Render(result, f.format);
    if (f.format == OutputFormat::kText) {
      for (const std::string& w : result.warnings) std::cerr << "tsctl: diff: warning: " << EscapeText(w) << '\n';
    }
  }
  std::cout << std::flush;
  return result.Equal() ? kExitOk : kExitFindings;
}

int RunDiff(const DiffCommandFlags& f, const GlobalOptions& global) {
  DiffOptions options;
  int status = Guarded("diff", "", global, [&] {
    options = ResolveDiffFlags(f.diff);
    return kExitOk;
  });
  if (status != kExitOk) return status;
  const DiffRequest request{.a = f.a, .b = f.b, .options = options, .max_input_bytes = global.max_input_bytes};
  // A format that reads pairs (ExecuTorch's) compares both sides itself, so
  // the other side gets its reader's line (what it starts with, a missing
  // file's I/O error) and a stream is read as one.
  if (const Format* reader = PairReader(request)) {
    return Guarded("diff", "", global, [&] { return Report(f, reader->diff_pair(request)); });
  }
  std::optional<OpenedFile> a, b;
  status = OpenDiffSide("diff", f.a, global, a);
  if (status == kExitOk) status = OpenDiffSide("diff", f.b, global, b);
  if (status != kExitOk) return status;
  return Guarded("diff", "", global, [&] { return Report(f, DiffOpened(*a, *b, options)); });
}

}  // namespace

RunFn BindDiff(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<DiffCommandFlags>();
  sub->add_option("a", flags->a,
                  "The first archive (e.g. the one in production): TorchScript, .pt2, or an ExecuTorch file compared "
                  "with another")
      ->required();
  sub->add_option("b", flags->b, "The second archive (e.g. the candidate)")->required();
  AddFormatOption(sub, flags->format, {OutputFormat::kText, OutputFormat::kJson});
  sub->add_flag("-q,--quiet", flags->quiet, "Print nothing; only the exit status tells");
  AddDiffFlags(sub, flags->diff);
  return [flags, &global] { return RunDiff(*flags, global); };
}

}  // namespace tsctl::cli
