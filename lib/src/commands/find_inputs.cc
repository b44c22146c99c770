#include "find_inputs.h"

#include "compat_internal.h"

#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "torch_child.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

FoundInputs FindInputs(const std::string& path, const RunSpec& spec,
                       const std::function<void(long candidate, const std::string& flags)>& progress,
                       const std::string& load_path) {
  FoundInputs f;
  ModelCheckOptions m;
  static_cast<RunSpec&>(m) = spec;
  m.path = path;
  m.load_path = load_path;
  m.check_determinism = false;
  m.device = "cpu";  // the search runs on the CPU, whatever device the run is for
  std::vector<CandidateTry> crashed;  // candidates that crashed a child; the next ones are tried
  double seconds = 0;
  auto on_event = [&progress](const ProgressEvent& e) {
    if (progress && e.kind == ProgressEvent::Kind::kTrying) progress(e.done + 1, e.text);
  };
  ChildOutcome child = RunModelCheck(m, {.timeout_seconds = spec.timeout_seconds, .memory_bytes = spec.memory_limit_bytes},
                                     crashed, seconds, nullptr, on_event);
  if (child.Died()) {
    // The guesses crashed or hung LibTorch: not an answer, a reason to say.
    const std::string tried = TriedCandidate(child.progress);
    f.why = child.Failure(tried.empty() ? "trying inferred inputs" : "trying inferred inputs (" + tried + ")");
    if (crashed.size() > 1) f.why += " (and " + std::to_string(crashed.size() - 1) + " candidates before it)";
    return f;
  }
  ModelCheckResult r = std::move(child).Take<ModelCheckResult>("trying inferred inputs");
  if (!r.loaded) {
    throw Error(ErrorKind::kTorch,
                "LibTorch cannot load it: " + r.load_error + CompatLoadNote(r.load_error, TSCTL_LIBTORCH_VERSION));
  }
  if (!r.method_found) return f;  // the caller reports the missing method with its own words
  if (!r.ran) {
    f.why = !r.run_skipped.empty() ? r.run_skipped : r.run_error;
    return f;
  }
  f.found = true;
  f.args = r.input_args;
  f.source = r.input_source;
  f.note = r.inputs_note;
  f.flags = r.inputs_flags;
  return f;
}

std::string DescribeFound(const FoundInputs& f) {
  if (f.source != "inferred") return f.source;
  std::string s = "inferred";
  if (!f.note.empty()) s += " (" + f.note + ")";
  if (!f.flags.empty()) s += "; pin them with " + f.flags;
  return s;
}

}  // namespace tsctl
