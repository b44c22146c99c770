// Per-operator profiling through LibTorch's global operator callbacks
// (at::addGlobalCallback with a RecordFunctionCallback), as PyTorch's note on
// large-scale deployments describes: sampled, thread-safe, with self time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <c10/util/ThreadLocalDebugInfo.h>

#include "tsctl/bench.h"

namespace tsctl {

// Tags operator callbacks with the model being timed: the seed note's "model
// id" passed down through thread-local debug info (c10::DebugInfoGuard).
// DebugInfoKind::PRODUCER_INFO is reused, since a new kind cannot be added.
class ModelDebugInfo : public c10::DebugInfoBase {
 public:
  explicit ModelDebugInfo(std::string id) : id_(std::move(id)) {}
  const std::string& id() const { return id_; }

 private:
  std::string id_;
};

struct TraceEvent {
  std::string name;
  std::string shapes;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int tid = 0;
  std::string model;  // from the thread's ModelDebugInfo, if any
};

class OpProfiler {
 public:
  // Registers the callbacks. Only one profiler may be active at a time.
  OpProfiler(bool shapes, double sample, bool trace);
  ~OpProfiler();  // removes the callbacks
  OpProfiler(const OpProfiler&) = delete;
  OpProfiler& operator=(const OpProfiler&) = delete;

  // Merged over all threads, most total time first; `top_ns` gets the sum of
  // the outermost operators' time.
  std::vector<OpStat> Stats(uint64_t* top_ns) const;
  std::vector<TraceEvent> Events() const;

 private:
  uint64_t handle_ = 0;
};

// Writes a Chrome trace (the JSON Perfetto and chrome://tracing open).
// Throws tsctl::Error (kIo).
void WriteChromeTrace(const std::string& path, const std::vector<TraceEvent>& events, const std::string& process_name);

}  // namespace tsctl
