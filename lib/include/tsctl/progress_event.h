// What a LibTorch child is doing, as it tells its parent: a typed event that
// crosses the process boundary through the codec (torch_child_codec.cc),
// never a line of text to parse back.
#pragma once

#include <cstdint>
#include <string>

namespace tsctl {

struct ProgressEvent {
  enum class Kind {
    kLoading,  // the archive is being loaded
    kLoaded,   // it loaded
    kMethod,   // the method was found: `text` is its schema
    kTrying,   // an inferred candidate is about to run: `done` its index (from 0), `text` the flags that pin it
    kInputs,   // bench: inputs are being inferred in a child: `done` the candidate tried (from 1)
    kWarmup,   // bench's warm-up: `done` of `total` calls, or tenths of a second when `seconds`
    kTiming,   // bench's timed phase, as kWarmup
  };
  Kind kind = Kind::kLoading;
  std::string text;
  int64_t done = 0;
  int64_t total = 0;
  bool seconds = false;
};

}  // namespace tsctl
