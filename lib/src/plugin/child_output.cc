#include "child_output.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "tsctl/escape.h"

namespace tsctl {

void ChildOutput::Append(const char* data, size_t size) {
  const size_t room = kChildOutputCap - std::min(kept_.size(), kChildOutputCap);
  const size_t take = std::min(room, size);
  kept_.append(data, take);
  dropped_ += size - take;
}

ChildOutput::Pipe ChildOutput::Drain(int fd) {
  char chunk[65536];
  for (size_t read = 0; read < kDrainBytes;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      Append(chunk, static_cast<size_t>(n));
      read += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? Pipe::kEmpty : Pipe::kEnded;
  }
  return Pipe::kMore;
}

std::string ChildOutput::Shown(const std::string& prefix) const {
  TextEscapeOptions one_line;
  one_line.escape_backslash = false;  // a person reads it; control bytes are what must not pass
  std::string out;
  for (size_t at = 0; at < kept_.size();) {
    size_t end = kept_.find('\n', at);
    if (end == std::string::npos) end = kept_.size();
    out += prefix + EscapeText(std::string_view(kept_).substr(at, end - at), one_line) + '\n';
    at = end + 1;
  }
  if (dropped_ > 0) {
    out += prefix + "(" + std::to_string(dropped_) + " more bytes dropped: tsctl keeps the first " +
           std::to_string(kChildOutputCap) + ")\n";
  }
  return out;
}

void ShowChildOutput(const ChildOutput& output, const std::string& prefix) {
  if (!std::getenv("TSCTL_VERBOSE")) return;
  const std::string text = output.Shown(prefix);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace tsctl
