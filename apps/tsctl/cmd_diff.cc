// tsctl diff A B: what changed between two archives, without LibTorch.
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli.h"
#include "diff_flags.h"
#include "tsctl/escape.h"
#include "tsctl/archive.h"
#include "tsctl/diff.h"

namespace tsctl::cli {
namespace {

struct DiffCommandFlags {
  std::string a, b;
  std::string format;
  bool quiet = false;
  DiffFlags diff;
};

int RunDiff(const DiffCommandFlags& f, const GlobalOptions& global) {
  DiffOptions options;
  int status = Guarded("diff", "", global, [&] {
    options = ResolveDiffFlags(f.diff);
    return kExitOk;
  });
  if (status != kExitOk) return status;
  std::optional<Archive> a, b;
  status = OpenDiffSide("diff", f.a, global, a);
  if (status == kExitOk) status = OpenDiffSide("diff", f.b, global, b);
  if (status != kExitOk) return status;
  return Guarded("diff", "", global, [&] {
    DiffResult result = DiffArchives(*a, *b, options);
    if (!f.quiet) {
      if (f.format == "json") {
        std::cout << RenderJson(result) << '\n';
      } else {
        std::ostringstream text;
        RenderDiffText(result, text);
        std::cout << text.str();
        for (const std::string& w : result.warnings) std::cerr << "tsctl: diff: warning: " << EscapeText(w) << '\n';
      }
    }
    std::cout << std::flush;
    return result.Equal() ? kExitOk : kExitFindings;
  });
}

}  // namespace

RunFn BindDiff(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<DiffCommandFlags>();
  sub->add_option("a", flags->a, "The first archive (e.g. the one in production)")->required();
  sub->add_option("b", flags->b, "The second archive (e.g. the candidate)")->required();
  AddFormatOption(sub, flags->format, {"text", "json"});
  sub->add_flag("-q,--quiet", flags->quiet, "Print nothing; only the exit status tells");
  AddDiffFlags(sub, flags->diff);
  return [flags, &global] { return RunDiff(*flags, global); };
}

}  // namespace tsctl::cli
