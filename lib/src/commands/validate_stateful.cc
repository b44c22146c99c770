// torch.stateful: state that survives a call, from a model-check child's
// result (the writes its graph makes, what calls on one copy changed) in
// words, and the number of those calls (--calls, --seed, or drawn).
#include <random>
#include <set>

#include "validate_internal.h"

namespace tsctl {
namespace {

// Calls on one copy when neither --calls nor --seed says: at least three,
// so a model honest for the determinism check's two calls still shows.
constexpr int kMinCalls = 3;
constexpr int kMaxCalls = 5;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The method's name, from its schema ("forward(...) -> ...").
std::string MethodName(const std::string& schema) {
  const size_t paren = schema.find('(');
  return paren == std::string::npos || paren == 0 ? "the method" : schema.substr(0, paren);
}

std::string WriteText(const StateWrite& w) {
  return w.attribute + " (" + w.op + (w.where.empty() ? "" : " at " + w.where) + ")";
}

std::string ChangeText(const StateChange& c) {
  return c.attribute + " (" + c.kind + "): " + c.before + " -> " + c.after +
         (c.after_call == 1 ? " after the first call" : " by call " + std::to_string(c.after_call));
}

// At most `listed` of `items` joined by "; ", then how many more.
template <typename T, typename F>
std::string Listed(const std::vector<T>& items, size_t listed, const F& text) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < listed; ++i) s += (i ? "; " : "") + text(items[i]);
  if (items.size() > listed) s += "; and " + std::to_string(items.size() - listed) + " more (the JSON report lists each)";
  return s;
}

}  // namespace

void ChooseCalls(const ValidateOptions& options, ModelCheckOptions& m) {
  if (options.calls > 0) {
    m.calls = options.calls;
    m.calls_origin = "--calls " + std::to_string(options.calls);
    return;
  }
  uint64_t x = options.seed;
  if (options.seed_given) {
    m.calls_origin = "from --seed " + std::to_string(options.seed);
  } else {
    std::random_device device;
    x = (static_cast<uint64_t>(device()) << 32) ^ device();
    m.calls_origin = "drawn at random";
  }
  m.calls = kMinCalls + static_cast<int>(SplitMix64(x) % (kMaxCalls - kMinCalls + 1));
}

bool HasStatefulCheck(const ModelCheckResult& r) { return r.state_searched || r.calls > 0; }

CheckResult StatefulCheck(const ModelCheckResult& r, const std::string& prefix) {
  constexpr size_t kListed = 4;
  std::vector<std::string> parts;
  std::set<std::string> notes;
  if (!r.state_writes.empty()) {
    parts.push_back(MethodName(r.schema) + " writes the model's state: " + Listed(r.state_writes, kListed, WriteText));
    for (const StateWrite& w : r.state_writes) {
      if (!w.note.empty()) notes.insert(w.note);
    }
  }
  const bool pinned = r.calls_origin.rfind("--calls", 0) == 0;
  const std::string calls = std::to_string(r.calls) + " calls on one copy (" + r.calls_origin +
                            (pinned ? "" : "; --calls " + std::to_string(r.calls) + " repeats them") + ")";
  if (!r.state_changes.empty()) {
    parts.push_back("attributes changed across a call: " + Listed(r.state_changes, kListed, ChangeText));
    for (const StateChange& c : r.state_changes) {
      if (!c.note.empty()) notes.insert(c.note);
    }
  }
  // Outputs that differ between two fresh copies say nothing of state
  // (torch.deterministic reports them).
  if (r.stateful && r.deterministic == true) {
    parts.push_back("call " + std::to_string(r.calls) + " answers otherwise than the first at " + r.stateful_note +
                    ": its outputs depend on earlier calls");
  }
  if (parts.empty()) {
    return {check::kTorchStateful, CheckStatus::kPass,
            prefix + (r.calls == 0 ? "no method writes the model's state (not run: not compared across calls)"
                      : r.stateful ? "no method writes the model's state, and calls on one copy change none of its "
                                     "attributes, buffers or parameters (its outputs differ from run to run: see "
                                     "torch.deterministic)"
                                   : "no method writes the model's state, and calls on one copy change none of its "
                                     "attributes, buffers or parameters, nor its outputs")};
  }
  std::string msg = JoinAll(parts, "; ");
  for (const std::string& n : notes) msg += " (" + n + ")";
  if (r.calls > 0) msg += "; " + calls;
  msg += ": state that survives a call makes the next answer depend on the calls before it";
  return {check::kTorchStateful, CheckStatus::kWarn, prefix + msg};
}

}  // namespace tsctl
