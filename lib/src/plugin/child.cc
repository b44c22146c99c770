#include "child.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "tsctl/error.h"

namespace tsctl {

void WarmUpTorch() {
  static const bool prepared = [] {
    LoadTorchPlugin().PrepareForFork();
    return true;
  }();
  (void)prepared;
}

TempFile::TempFile() {
  char tmpl[] = "/tmp/tsctl-child-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) throw Error(ErrorKind::kIo, "cannot create a temporary file in /tmp");
  ::close(fd);
  path = tmpl;
}

TempFile::~TempFile() { ::unlink(path.c_str()); }

std::string TempFile::Read() const {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string SignalName(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

std::string TriedCandidate(const std::string& progress) {
  const std::string marker = "trying ";
  return progress.rfind(marker, 0) == 0 ? progress.substr(marker.size()) : std::string();
}

std::string DescribeChildFailure(const IsolatedResult& r, const std::string& what, double timeout_seconds) {
  if (r.timed_out) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", timeout_seconds);
    return "LibTorch did not finish " + what + " within " + secs + " s (killed)";
  }
  if (r.signal != 0) {
    return "LibTorch crashed with " + SignalName(r.signal) + " (" + strsignal(r.signal) + ") while " + what;
  }
  return "the LibTorch child exited with status " + std::to_string(r.exit_code) + " while " + what;
}

}  // namespace tsctl
