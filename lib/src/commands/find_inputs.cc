#include "tsctl/find_inputs.h"

#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "child.h"
#include "isolate.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

FoundInputs FindInputs(const std::string& path, const std::string& method, const FindInputsOptions& options) {
  const double timeout_seconds = options.timeout_seconds;
  FoundInputs f;
  Archive archive = Archive::Open(OpenFileSource(path));
  try {
    ArchiveInputs stored = InputsFromArchive(archive, method);
    if (!stored.inputs.empty()) {
      f.found = true;
      f.inputs = stored.inputs;
      f.source = stored.source;
      return f;
    }
  } catch (const Error&) {
  }
  ModelCheckOptions m;
  m.path = path;
  m.method = method;
  m.check_determinism = false;
  m.load_libraries = options.load_libraries;
  m.quantized_engine = options.quantized_engine;
  TempFile progress;
  m.progress_path = progress.path;
  WarmUpTorch();  // once per process: every child is forked warm
  IsolatedResult iso = RunIsolated([&] { return SerializeModelCheck(LoadTorchPlugin().CheckModel(m)); }, timeout_seconds);
  if (iso.timed_out) {
    f.why = "trying inferred inputs did not finish within " + std::to_string(static_cast<int>(timeout_seconds)) + " s";
    return f;
  }
  if (iso.signal || iso.exit_code) {
    const std::string tried = TriedCandidate(progress.Read());
    f.why = "LibTorch crashed while trying inferred inputs" + (tried.empty() ? std::string() : " (" + tried + ")");
    return f;
  }
  if (!iso.ok) throw Error(iso.error_kind, iso.error);
  ModelCheckResult r = DeserializeModelCheck(iso.output);
  if (!r.loaded) throw Error(ErrorKind::kTorch, "LibTorch cannot load it: " + r.load_error);
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
