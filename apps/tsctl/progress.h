// Progress on stderr for long work: one line redrawn in place, and only when
// stderr is a terminal (never in a pipe, a file or CI logs; stdout, which
// carries the report, is never touched).
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace tsctl::cli {

// Whether progress may be shown: stderr is a terminal whose TERM is not "dumb".
bool StderrIsTerminal();

class ProgressLine {
 public:
  // Shows nothing unless `enabled`; "[tsctl COMMAND] ..." otherwise.
  ProgressLine(std::string command, bool enabled);
  ~ProgressLine();  // clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  // Replaces the line with `text` (cut to the terminal's usual 80 columns).
  // Safe to call from any thread.
  void Show(const std::string& text);
  // "K of N" and, once a step is done and the steps took over a second, the
  // time left at the pace so far ("3 of 8, about 12 s left"). Time counts
  // from construction, or from the last Restart().
  // `also`, when given, follows after "; " (what is being waited on).
  void Steps(const std::string& what, size_t done, size_t total, const std::string& also = "");
  void Restart();
  // Erases the line (before the report is printed, or at the end).
  void Clear();

 private:
  std::string command_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
};

// "about 12 s left" / "about 3 min left" for `done` of `total` steps that
// took `elapsed_seconds` so far; "" when nothing is done yet.
std::string TimeLeft(size_t done, size_t total, double elapsed_seconds);

}  // namespace tsctl::cli
