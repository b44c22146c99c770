#include "op_profiler.h"

#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "sandbox.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"

namespace tsctl {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Frame {
  int64_t start_ns;
  int64_t child_ns;
};

struct ThreadState {
  int tid = 0;
  std::vector<Frame> stack;
  std::unordered_map<std::string, OpStat> stats;
  uint64_t top_ns = 0;
  std::vector<TraceEvent> events;
};

// Callbacks are plain function pointers, so their configuration is global.
struct Global {
  std::mutex mu;
  std::vector<std::unique_ptr<ThreadState>> threads;
  bool shapes = false;
  bool trace = false;
  bool active = false;
};
Global& ProfilerState() {
  static Global g;
  return g;
}
thread_local ThreadState* tls = nullptr;
constexpr size_t kMaxEvents = 2'000'000;

ThreadState& State() {
  if (!tls) {
    auto s = std::make_unique<ThreadState>();
    std::lock_guard<std::mutex> lock(ProfilerState().mu);
    s->tid = static_cast<int>(ProfilerState().threads.size()) + 1;
    tls = s.get();
    ProfilerState().threads.push_back(std::move(s));
  }
  return *tls;
}

struct ShapesContext : at::ObserverContext {
  std::string shapes;
};

std::string ShapesOf(const at::RecordFunction& fn) {
  std::ostringstream s;
  bool first = true;
  for (const c10::IValue& v : fn.inputs()) {
    if (!first) s << ", ";
    first = false;
    if (v.isTensor()) {
      s << v.toTensor().sizes();
    } else if (v.isScalar()) {
      s << "scalar";
    } else if (v.isNone()) {
      s << "None";
    } else if (v.isIntList()) {
      std::vector<int64_t> ints = v.toIntVector();
      s << c10::IntArrayRef(ints);
    } else if (v.isTensorList()) {
      s << "[" << v.toTensorList().size() << " tensors]";
    } else {
      s << v.tagKind();
    }
  }
  return s.str();
}

std::unique_ptr<at::ObserverContext> OnProfiledStart(const at::RecordFunction& fn) {
  ThreadState& st = State();
  st.stack.push_back({NowNs(), 0});
  if (ProfilerState().shapes) {
    auto ctx = std::make_unique<ShapesContext>();
    ctx->shapes = ShapesOf(fn);
    return ctx;
  }
  return nullptr;
}

void OnEnd(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  ThreadState& st = State();
  if (st.stack.empty()) return;  // started before the profiler
  Frame f = st.stack.back();
  st.stack.pop_back();
  int64_t dur = NowNs() - f.start_ns;
  std::string shapes = ctx ? static_cast<ShapesContext*>(ctx)->shapes : std::string();
  std::string key = shapes.empty() ? std::string(fn.name()) : std::string(fn.name()) + "\x1f" + shapes;
  OpStat& s = st.stats[key];
  if (s.calls == 0) {
    s.name = fn.name();
    s.shapes = shapes;
  }
  s.calls += 1;
  s.total_ns += static_cast<uint64_t>(dur);
  s.self_ns += static_cast<uint64_t>(std::max<int64_t>(0, dur - f.child_ns));
  if (st.stack.empty()) {
    st.top_ns += static_cast<uint64_t>(dur);
  } else {
    st.stack.back().child_ns += dur;
  }
  if (ProfilerState().trace && st.events.size() < kMaxEvents) {
    // Which model is this? The callback learns it from the debug info the
    // caller set with c10::DebugInfoGuard.
    const auto* info = dynamic_cast<const ModelDebugInfo*>(c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PRODUCER_INFO));
    st.events.push_back({fn.name(), shapes, f.start_ns, dur, st.tid, info ? info->id() : std::string()});
  }
}

}  // namespace

OpProfiler::OpProfiler(bool shapes, double sample, bool trace) {
  Global& g = ProfilerState();
  {
    std::lock_guard<std::mutex> lock(g.mu);
    if (g.active) throw Error(ErrorKind::kUsage, "only one operator profiler at a time");
    g.active = true;
    g.shapes = shapes;
    g.trace = trace;
    g.threads.clear();
  }
  at::RecordFunctionCallback cb(&OnProfiledStart, &OnEnd);
  cb.needsInputs(shapes).samplingProb(sample).scopes({at::RecordScope::FUNCTION});
  handle_ = at::addGlobalCallback(cb);
}

OpProfiler::~OpProfiler() {
  at::removeCallback(handle_);
  std::lock_guard<std::mutex> lock(ProfilerState().mu);
  ProfilerState().active = false;
}

std::vector<OpStat> OpProfiler::Stats(uint64_t* top_ns) const {
  std::map<std::string, OpStat> merged;
  uint64_t top = 0;
  std::lock_guard<std::mutex> lock(ProfilerState().mu);
  for (const auto& t : ProfilerState().threads) {
    top += t->top_ns;
    for (const auto& [key, s] : t->stats) {
      OpStat& m = merged[key];
      m.name = s.name;
      m.shapes = s.shapes;
      m.calls += s.calls;
      m.total_ns += s.total_ns;
      m.self_ns += s.self_ns;
    }
  }
  std::vector<OpStat> out;
  for (auto& [k, s] : merged) out.push_back(s);
  std::sort(out.begin(), out.end(), [](const OpStat& a, const OpStat& b) { return a.self_ns > b.self_ns; });
  if (top_ns) *top_ns = top;
  return out;
}

std::vector<TraceEvent> OpProfiler::Events() const {
  std::vector<TraceEvent> out;
  std::lock_guard<std::mutex> lock(ProfilerState().mu);
  for (const auto& t : ProfilerState().threads) out.insert(out.end(), t->events.begin(), t->events.end());
  return out;
}

void WriteChromeTrace(const std::string& path, const std::vector<TraceEvent>& events, const std::string& process_name) {
  int64_t origin = events.empty() ? 0 : events.front().start_ns;
  for (const auto& e : events) origin = std::min(origin, e.start_ns);
  nlohmann::json trace;
  trace["displayTimeUnit"] = "ms";
  nlohmann::json list = nlohmann::json::array();
  list.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "tsctl bench " + process_name}}}});
  for (const auto& e : events) {
    nlohmann::json ev = {{"name", e.name}, {"ph", "X"}, {"cat", "operator"}, {"pid", 1}, {"tid", e.tid},
                         {"ts", static_cast<double>(e.start_ns - origin) / 1000.0},
                         {"dur", static_cast<double>(e.dur_ns) / 1000.0}};
    ev["args"] = nlohmann::json::object();
    if (!e.model.empty()) ev["args"]["model"] = e.model;
    if (!e.shapes.empty()) ev["args"]["input_shapes"] = e.shapes;
    list.push_back(std::move(ev));
  }
  trace["traceEvents"] = std::move(list);
  WriteChildFile(path, trace.dump());
}

}  // namespace tsctl
