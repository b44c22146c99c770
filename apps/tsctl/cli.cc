#include "cli.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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
  std::string tmp = path + ".tsctl-tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(ErrorKind::kIo, "cannot write " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(ErrorKind::kIo, "cannot write " + path + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(ErrorKind::kIo, "cannot write " + path + ": " + std::strerror(err));
  }
}

}  // namespace tsctl::cli
