// The parent's reading of a LibTorch child's frames (process.h: a type byte,
// a 4-byte length, the payload), fed in whatever pieces the pipe gives. A
// file frame (a 4-byte path length, the path, the file's bytes: sandbox.h
// WriteChildFile) is streamed into the AtomicFile of its path as its bytes
// arrive, so tsctl never holds a child's output, reference or trace in
// memory (it held three copies before: the read buffer, the payload, the
// bytes handed to the writer). Every other frame is handed over whole.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "tsctl/atomic_file.h"

namespace tsctl {

class FrameStream {
 public:
  // `file_type`: the type of file frames; `allowed`: the paths the request
  // named (a file frame for another is discarded, and unnamed_file() says
  // so); `max_file_bytes`: a larger file is discarded with write_error()
  // naming the limit (0: no limit); `on_frame` gets every other frame.
  FrameStream(char file_type, std::set<std::string> allowed, uint64_t max_file_bytes,
              std::function<void(char type, std::string payload)> on_frame);
  // Takes the next bytes the child sent.
  void Feed(const char* data, size_t n);

  // Why a file could not be written ("" if every one was).
  const std::string& write_error() const { return write_error_; }
  // Whether the child sent a file the request did not name.
  bool unnamed_file() const { return unnamed_file_; }

 private:
  enum class State { kHeader, kBody, kPathLength, kPath, kFile };
  void StartFile();
  void FinishFile();

  char file_type_;
  std::set<std::string> allowed_;
  uint64_t max_file_bytes_;
  std::function<void(char, std::string)> on_frame_;
  State state_ = State::kHeader;
  std::string head_;     // the header or path length being read
  char type_ = 0;
  uint64_t left_ = 0;    // bytes of the current frame still to come
  uint32_t path_length_ = 0;
  std::string payload_;  // a whole frame's payload, or a file's path
  std::unique_ptr<AtomicFile> file_;  // null: the file's bytes are discarded
  std::string write_error_;
  bool unnamed_file_ = false;
};

}  // namespace tsctl
