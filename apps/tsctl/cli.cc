#include "cli.h"

#include "tsctl/atomic_file.h"

#include <iostream>

namespace tsctl::cli {

int Report(const std::string& command, const std::string& subject, const Error& error,
           const GlobalOptions& global) {
  std::cerr << "tsctl: " << command << ": ";
  if (!subject.empty()) std::cerr << subject << ": ";
  std::cerr << error.what() << '\n';
  if (global.verbose && !error.detail().empty()) std::cerr << error.detail() << '\n';
  return ExitCodeFor(error.kind());
}

int ReportUnexpected(const std::string& command, const std::string& subject,
                     const std::exception& error) {
  std::cerr << "tsctl: " << command << ": ";
  if (!subject.empty()) std::cerr << subject << ": ";
  std::cerr << "unexpected error: " << error.what() << '\n';
  return kExitIo;
}

void WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return;
  }
  WriteFileAtomically(path, text);
}

}  // namespace tsctl::cli
