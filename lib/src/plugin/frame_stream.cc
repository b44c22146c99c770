#include "frame_stream.h"

#include <algorithm>
#include <utility>

#include "process.h"
#include "tsctl/error.h"
#include "tsctl/text_util.h"

namespace tsctl {

FrameStream::FrameStream(char file_type, std::set<std::string> allowed, uint64_t max_file_bytes,
                         std::function<void(char type, std::string payload)> on_frame)
    : file_type_(file_type), allowed_(std::move(allowed)), max_file_bytes_(max_file_bytes), on_frame_(std::move(on_frame)) {}

void FrameStream::Feed(const char* data, size_t n) {
  while (n > 0) {
    switch (state_) {
      case State::kHeader:
      case State::kPathLength: {
        const size_t want = state_ == State::kHeader ? kFrameHeader : 4;
        const size_t take = std::min(n, want - head_.size());
        head_.append(data, take);
        data += take;
        n -= take;
        if (head_.size() < want) break;
        if (state_ == State::kHeader) {
          type_ = head_[0];
          left_ = GetLength(head_.data() + 1);
          head_.clear();
          payload_.clear();
          state_ = type_ == file_type_ ? State::kPathLength : State::kBody;
          if (state_ == State::kPathLength && left_ < 4) state_ = State::kBody;  // malformed: dropped whole
          if (state_ == State::kBody && left_ == 0) {
            if (type_ != file_type_) on_frame_(type_, std::string());
            state_ = State::kHeader;
          }
        } else {
          path_length_ = GetLength(head_.data());
          head_.clear();
          left_ -= 4;
          state_ = State::kPath;
          if (path_length_ > left_) {  // a path longer than its frame: the frame is dropped
            path_length_ = 0;
            state_ = State::kFile;
            file_.reset();
          }
        }
        break;
      }
      case State::kBody:
      case State::kPath: {
        const uint64_t want = state_ == State::kBody ? left_ : path_length_ - payload_.size();
        const size_t take = static_cast<size_t>(std::min<uint64_t>(n, want));
        payload_.append(data, take);
        data += take;
        n -= take;
        if (state_ == State::kBody) {
          left_ -= take;
          if (left_ > 0) break;
          if (type_ != file_type_) on_frame_(type_, std::move(payload_));
          payload_.clear();
          state_ = State::kHeader;
        } else if (payload_.size() == path_length_) {
          left_ -= path_length_;
          StartFile();
        }
        break;
      }
      case State::kFile: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(n, left_));
        if (file_) {
          try {
            file_->Write(data, take);
          } catch (const Error& e) {
            write_error_ = e.what();
            file_.reset();
          }
        }
        data += take;
        n -= take;
        left_ -= take;
        if (left_ == 0) FinishFile();
        break;
      }
    }
  }
}

void FrameStream::StartFile() {
  const std::string path = std::move(payload_);
  payload_.clear();
  state_ = State::kFile;
  file_.reset();
  if (!allowed_.count(path)) {
    unnamed_file_ = true;
  } else if (max_file_bytes_ > 0 && left_ > max_file_bytes_) {
    if (write_error_.empty()) {
      write_error_ = path + ": not written: the model's " + HumanBytes(left_) + " are more than --max-output-size (" +
                     HumanBytes(max_file_bytes_) + ")";
    }
  } else {
    try {
      file_ = std::make_unique<AtomicFile>(path);
    } catch (const Error& e) {
      if (write_error_.empty()) write_error_ = e.what();
    }
  }
  if (left_ == 0) FinishFile();
}

void FrameStream::FinishFile() {
  if (file_) {
    try {
      file_->Commit();
    } catch (const Error& e) {
      if (write_error_.empty()) write_error_ = e.what();
    }
    file_.reset();
  }
  state_ = State::kHeader;
}

}  // namespace tsctl
