#include "cli.h"

#include "tsctl/atomic_file.h"
#include "tsctl/escape.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace tsctl::cli {

int Report(const std::string& command, const std::string& subject, const Error& error,
           const GlobalOptions& global) {
  // Names and causes come from archives: escaped, so the line stays one line.
  std::cerr << "tsctl: " << command << ": ";
  // A message that names the file itself (the ExecuTorch reader's) is not
  // prefixed with it again.
  const std::string_view what = error.what();
  if (!subject.empty() && what.rfind(subject + ": ", 0) != 0) std::cerr << EscapeText(subject) << ": ";
  std::cerr << EscapeText(what) << '\n';
  if (global.verbose && !error.detail().empty()) {
    std::cerr << EscapeText(error.detail(), {.keep_newlines = true, .escape_backslash = false}) << '\n';
  }
  return ExitCodeFor(error.kind());
}

int ReportUnexpected(const std::string& command, const std::string& subject,
                     const std::exception& error) {
  std::cerr << "tsctl: " << command << ": ";
  if (!subject.empty()) std::cerr << EscapeText(subject) << ": ";
  std::cerr << "unexpected error: " << EscapeText(error.what()) << '\n';
  return kExitIo;
}

int Guarded(const std::string& command, const std::string& subject, const GlobalOptions& global,
            const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const Interrupted& e) {
    // Ctrl-C, a caller's TERM or HUP: the whole run stops, with a shell's
    // status (128 + signal), never a timeout or a finding.
    Report(command, subject, e, global);
    std::cout << std::flush;
    std::exit(128 + e.signal());
  } catch (const Error& e) {
    return Report(command, subject, e, global);
  } catch (const std::exception& e) {
    return ReportUnexpected(command, subject, e);
  }
}

int ForEachArchive(const std::string& command, const std::vector<std::string>& archives, const GlobalOptions& global,
                   const std::function<void(const std::string& path)>& fn) {
  int status = kExitOk;
  for (const std::string& path : archives) {
    int code = Guarded(command, path, global, [&] {
      fn(path);
      return kExitOk;
    });
    if (status == kExitOk) status = code;
  }
  std::cout << std::flush;
  return status;
}

uint64_t ParseByteSize(const std::string& text, const std::string& flag) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  if (unit.size() == 3 && unit.substr(1) == "iB") unit = unit.substr(0, 1);
  if (unit.size() == 2 && unit[1] == 'B') unit = unit.substr(0, 1);
  const std::string units = "KMGT";
  double scale = 1;
  if (!unit.empty()) {
    size_t k = unit.size() == 1 ? units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])))) : std::string::npos;
    scale = k == std::string::npos ? 0 : std::pow(1024.0, static_cast<double>(k + 1));
  }
  double bytes = v * scale;
  if (used == 0 || scale == 0 || !(bytes >= 1 << 20) || bytes > 1e18) {
    throw Error(ErrorKind::kUsage, flag + ": '" + text + "' is not a size of at least 1M (e.g. 512M, 8G)");
  }
  return static_cast<uint64_t>(bytes);
}

std::vector<double> ParseNumberList(const std::string& text, const std::string& flag, double min, double max,
                                    const std::string& what) {
  std::vector<double> out;
  std::stringstream s(text);
  std::string part;
  while (std::getline(s, part, ',')) {
    try {
      size_t used = 0;
      double v = std::stod(part, &used);
      if (used != part.size() || v < min || v > max) throw std::invalid_argument(part);
      out.push_back(v);
    } catch (const std::exception&) {
      throw Error(ErrorKind::kUsage, flag + ": '" + part + "' is not " + what);
    }
  }
  if (out.empty()) throw Error(ErrorKind::kUsage, flag + " needs a value");
  return out;
}

CLI::Validator NumberIn(double min, double max, bool integer, const std::string& range) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        try {
          size_t used = 0;
          double v = std::stod(text, &used);
          if (used == text.size() && std::isfinite(v) && v >= min && v <= max && (!integer || v == std::floor(v))) return {};
        } catch (const std::exception&) {
        }
        return "'" + text + "' is out of range: must be " + range;
      },
      "");
}

void OneValuePerFlag(CLI::App* sub) {
  for (CLI::Option* opt : sub->get_options()) {
    if (opt->get_positional() || opt->get_allow_extra_args() || opt->get_expected_max() < 2) continue;
    opt->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }
}

void AddFormatOption(CLI::App* sub, OutputFormat& format, const std::vector<OutputFormat>& choices) {
  format = choices.front();
  std::vector<std::string> names;
  std::string list;
  for (OutputFormat c : choices) {
    names.push_back(OutputFormatName(c));
    list += (list.empty() ? "" : ", ") + names.back();
  }
  sub->add_option_function<std::string>(
         "--format", [&format](const std::string& name) { format = *OutputFormatByName(name); }, "Output format: " + list)
      ->check(CLI::IsMember(names))
      ->default_str(names.front());
  sub->add_flag_callback("--json", [&format] { format = OutputFormat::kJson; }, "Same as --format json");
}

std::string ClosestName(const std::string& typo, const std::vector<std::string>& names) {
  // Levenshtein distance; a name within a third of its length (at least 1, at
  // most 3 edits) counts as close, as in ninja's SpellcheckString.
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  size_t best_distance = 0;
  for (const auto& name : names) {
    size_t d = distance(typo, name);
    size_t allowed = std::clamp<size_t>(name.size() / 3, 1, 3);
    if (d <= allowed && (best.empty() || d < best_distance)) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

void WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return;
  }
  WriteFileAtomically(path, text);
}

}  // namespace tsctl::cli
