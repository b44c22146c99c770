// What a LibTorch child (and the LibTorch server) writes on its standard
// output and error. Both are one pipe that tsctl reads, never tsctl's own
// streams: a model's print(), a warning from a pool thread whose handler
// LibTorch left at its default, a library's log line, whichever thread
// writes it. tsctl keeps the first kChildOutputCap bytes, counts and drops
// the rest (reading on, so that the child never blocks on a full pipe), and
// shows the text only with -v, each line escaped after a prefix of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tsctl {

// What tsctl keeps of one child's output.
inline constexpr size_t kChildOutputCap = size_t{64} << 10;

class ChildOutput {
 public:
  // What a pipe is after Drain: empty for now, holding more (Drain reads
  // at most kDrainBytes a call, so that a child writing as fast as tsctl
  // reads cannot keep it there), or at its end (every writer closed it, or
  // it failed).
  enum class Pipe { kEmpty, kMore, kEnded };
  static constexpr size_t kDrainBytes = size_t{1} << 20;
  // Reads what the non-blocking `fd` holds now.
  Pipe Drain(int fd);
  void Append(const char* data, size_t size);
  const std::string& kept() const { return kept_; }
  uint64_t dropped() const { return dropped_; }
  // The text for a person: each line of what was kept (a last line without
  // a newline too) escaped (EscapeText: no control characters, valid UTF-8;
  // backslashes kept as they are) after `prefix`, then one line counting the
  // bytes dropped; "" for no output.
  std::string Shown(const std::string& prefix) const;

 private:
  std::string kept_;
  uint64_t dropped_ = 0;
};

// With -v (TSCTL_VERBOSE set): output.Shown(prefix) on stderr.
void ShowChildOutput(const ChildOutput& output, const std::string& prefix);

}  // namespace tsctl
