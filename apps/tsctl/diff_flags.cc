// The flags of a DiffOptions, and the opening of A and B, for tsctl diff and
// tsctl report A B.
#include "diff_flags.h"

#include <cmath>
#include <sstream>

namespace tsctl::cli {
namespace {

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

}  // namespace

std::vector<CLI::Option*> AddDiffFlags(CLI::App* sub, DiffFlags& flags) {
  DiffOptions& o = flags.options;
  return {
      sub->add_option("--ignore", flags.ignore,
                      "Sections to leave out, comma-separated: format, records, modules, parameters, constants, "
                      "code, operators, extra"),
      sub->add_option("--only", flags.only, "Compare only these sections (comma-separated; --ignore applies after)"),
      sub->add_option("--rtol", o.rtol,
                      "Relative tolerance: elements a, b are equal when |a-b| <= atol + rtol*|a| (default 0)")
          ->check(kTolerance),
      sub->add_option("--atol", o.atol, "Absolute tolerance (default 0)")->check(kTolerance),
      sub->add_flag("--exact", o.exact,
                    "Read and compare records whose size and CRC-32 match (default: take them as equal)"),
      sub->add_flag("--ignore-mangle", o.ignore_mangle,
                    "Leave ___torch_mangle_N namespaces out of class names and code before comparing (module types "
                    "are always compared modulo them)"),
      sub->add_option("-U,--context", o.context_lines, "Lines of context in code and text diffs (default 3)")
          ->check(CLI::Range(0, 1000)),
  };
}

DiffOptions ResolveDiffFlags(const DiffFlags& flags) {
  DiffOptions options = flags.options;
  if (!flags.only.empty()) {
    for (bool& on : options.sections) on = false;
    for (DiffSection s : Sections(flags.only, "--only")) options.sections[static_cast<int>(s)] = true;
  }
  if (!flags.ignore.empty()) {
    for (DiffSection s : Sections(flags.ignore, "--ignore")) options.sections[static_cast<int>(s)] = false;
  }
  return options;
}

int OpenDiffSide(const std::string& command, const std::string& path, const GlobalOptions& global,
                 std::optional<OpenedFile>& out) {
  return Guarded(command, path, global, [&] {
    out.emplace(Open(path, global.max_input_bytes));
    return kExitOk;
  });
}

}  // namespace tsctl::cli
