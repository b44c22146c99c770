// A few lines of our own rather than a library: Debian 12 packages no C++
// progress-bar library (indicators, tqdm-cpp are not in it), and one line
// redrawn with "\r" and "ESC[K" is all tsctl shows.
#include "progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "tsctl/escape.h"
#include "tsctl/text_util.h"

namespace tsctl::cli {

bool StderrIsTerminal() {
  if (!::isatty(STDERR_FILENO)) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

ProgressLine::ProgressLine(std::string command, bool enabled)
    : command_(std::move(command)), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Show(const std::string& text) {
  if (!enabled_) return;
  // Callers escape the paths they pass; what else the text holds (a
  // method's name as the caller typed it) is escaped here, backslashes left
  // alone so that nothing is escaped twice. Cut at a character's start.
  std::string line = "[tsctl " + command_ + "] " + EscapeText(text, {.escape_backslash = false});
  line.resize(Utf8CutPoint(line, 79));
  std::lock_guard<std::mutex> lock(mu_);
  std::cerr << "\r\x1b[K" << line << std::flush;
  shown_ = true;
}

void ProgressLine::Steps(const std::string& what, size_t done, size_t total, const std::string& also) {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string text = what + (what.empty() ? "" : " ") + std::to_string(done) + " of " + std::to_string(total);
  if (std::string left = elapsed >= 1 ? TimeLeft(done, total, elapsed) : ""; !left.empty()) text += ", " + left;
  if (!also.empty()) text += "; " + also;
  Show(text);
}

void ProgressLine::Restart() { start_ = std::chrono::steady_clock::now(); }

void ProgressLine::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!shown_) return;
  std::cerr << "\r\x1b[K" << std::flush;
  shown_ = false;
}

std::string TimeLeft(size_t done, size_t total, double elapsed_seconds) {
  if (done == 0 || done >= total || elapsed_seconds <= 0) return "";
  const double left = elapsed_seconds / static_cast<double>(done) * static_cast<double>(total - done);
  char buf[48];
  if (left < 90) std::snprintf(buf, sizeof buf, "about %.0f s left", std::ceil(left));
  else std::snprintf(buf, sizeof buf, "about %.0f min left", std::ceil(left / 60));
  return buf;
}

}  // namespace tsctl::cli
