// tsctl diff A B: what changed between two archives, without LibTorch.
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli.h"
#include "tsctl/escape.h"
#include "tsctl/archive.h"
#include "tsctl/diff.h"
#include "tsctl/pte.h"

namespace tsctl::cli {
namespace {

struct DiffFlags {
  std::string a, b;
  std::string format;
  bool quiet = false;
  std::string ignore, only;
  DiffOptions options;
};

// A tolerance: a finite number >= 0.
const CLI::Validator kTolerance(
    [](std::string& text) -> std::string {
      try {
        size_t used = 0;
        double v = std::stod(text, &used);
        if (used == text.size() && v >= 0 && std::isfinite(v)) return {};
      } catch (const std::exception&) {
      }
      return "'" + text + "' is not a number >= 0";
    },
    "FLOAT>=0");

// "code,extra" -> sections; throws tsctl::Error (kUsage) for an unknown name.
std::vector<DiffSection> Sections(const std::string& list, const std::string& flag) {
  std::vector<DiffSection> out;
  std::stringstream s(list);
  std::string part;
  while (std::getline(s, part, ',')) {
    if (part.empty()) continue;
    try {
      out.push_back(ParseDiffSection(part));
    } catch (const Error& e) {
      throw Error(ErrorKind::kUsage, flag + ": " + e.what());
    }
  }
  if (out.empty()) throw Error(ErrorKind::kUsage, flag + " needs at least one section");
  return out;
}

// Prints `result` as asked; exit 0 when the two are equal, 1 when not.
int Report(const DiffFlags& f, const DiffResult& result) {
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
}

// Two ExecuTorch files; one with a file of another kind is refused.
int RunPteDiff(const DiffFlags& f, const GlobalOptions& global) {
  const bool pa = IsPteFile(f.a), pb = IsPteFile(f.b);
  const std::string& other = pa ? f.b : f.a;
  return Guarded("diff", pa && pb ? "" : other, global, [&] {
    if (!(pa && pb)) {
      throw Error(ErrorKind::kFormat, "not an ExecuTorch file, and " + std::string(pa ? "A" : "B") +
                                          " is one: diff compares ExecuTorch files with ExecuTorch files");
    }
    return Report(f, DiffPteFiles(f.a, f.b, f.options, global.max_input_bytes));
  });
}

int RunDiff(DiffFlags f, const GlobalOptions& global) {
  int status = Guarded("diff", "", global, [&] {
    if (!f.only.empty()) {
      for (bool& on : f.options.sections) on = false;
      for (DiffSection s : Sections(f.only, "--only")) f.options.sections[static_cast<int>(s)] = true;
    }
    if (!f.ignore.empty()) {
      for (DiffSection s : Sections(f.ignore, "--ignore")) f.options.sections[static_cast<int>(s)] = false;
    }
    return kExitOk;
  });
  if (status != kExitOk) return status;
  if (IsPteFile(f.a) || IsPteFile(f.b)) return RunPteDiff(f, global);
  std::optional<Archive> a, b;
  status = Guarded("diff", f.a, global, [&] {
    a.emplace(Archive::OpenModel(OpenFileSource(f.a, global.max_input_bytes)));
    return kExitOk;
  });
  if (status != kExitOk) return status;
  status = Guarded("diff", f.b, global, [&] {
    b.emplace(Archive::OpenModel(OpenFileSource(f.b, global.max_input_bytes)));
    return kExitOk;
  });
  if (status != kExitOk) return status;
  return Guarded("diff", "", global, [&] {
    return Report(f, DiffArchives(*a, *b, f.options));
  });
}

}  // namespace

RunFn BindDiff(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<DiffFlags>();
  sub->add_option("a", flags->a,
                  "The first archive (e.g. the one in production): TorchScript, .pt2, or an ExecuTorch file compared "
                  "with another")
      ->required();
  sub->add_option("b", flags->b, "The second archive (e.g. the candidate)")->required();
  AddFormatOption(sub, flags->format, {"text", "json"});
  sub->add_flag("-q,--quiet", flags->quiet, "Print nothing; only the exit status tells");
  sub->add_option("--ignore", flags->ignore,
                  "Sections to leave out, comma-separated: format, records, modules, parameters, constants, "
                  "code, operators, extra");
  sub->add_option("--only", flags->only, "Compare only these sections (comma-separated; --ignore applies after)");
  sub->add_option("--rtol", flags->options.rtol,
                  "Relative tolerance: elements a, b are equal when |a-b| <= atol + rtol*|a| (default 0)")
      ->check(kTolerance);
  sub->add_option("--atol", flags->options.atol, "Absolute tolerance (default 0)")->check(kTolerance);
  sub->add_flag("--exact", flags->options.exact,
                "Read and compare records whose size and CRC-32 match (default: take them as equal)");
  sub->add_flag("--ignore-mangle", flags->options.ignore_mangle,
                "Leave ___torch_mangle_N namespaces out of class names and code before comparing (module types are always compared modulo them)");
  sub->add_option("-U,--context", flags->options.context_lines, "Lines of context in code and text diffs (default 3)")
      ->check(CLI::Range(0, 1000));
  return [flags, &global] { return RunDiff(*flags, global); };
}

}  // namespace tsctl::cli
