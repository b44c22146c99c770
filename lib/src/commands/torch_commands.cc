// Entry points of the commands that need LibTorch (tsctl/torch_backend.h):
// tsctl's own checks first, then the work in a warm child (plugin/torch_child.h, the one door).
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "../zip/npz.h"
#include "apply_inputs.h"
#include "check_before_load.h"
#include "plugin_abi.h"
#include "example_inputs.h"
#include "torch_child.h"
#include "tsctl/archive.h"
#include "tsctl/atomic_file.h"
#include "bench_sweep.h"
#include "compat_internal.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/inputs.h"
#include "tsctl/pt2.h"
#include "tsctl/torch_backend.h"
#include "tsctl/zip_structure.h"
#include "zip_model.h"

namespace tsctl {

MakeResult Export(const MakeRequest& request);  // export.cc

std::pair<std::string, std::string> SplitPythonSpec(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) {
    throw Error(ErrorKind::kUsage, "--python wants FILE.py:NAME, got '" + spec + "'");
  }
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

namespace {

// ".npy"/".npz" when --save-outputs names such a file (the child writes
// NumPy's format then), else "" (torch.save's).
std::string OutputSuffix(const std::string& path) { return NumpySuffix(path); }

// script --class: the name becomes __torch__.NAME, a class in the archive's
// code that torch.jit.load parses as Python. An empty, dotted, spaced or
// keyword name makes LibTorch assert or write an archive nobody can load.
void RequireClassName(const std::string& name) {
  static const char* const kKeywords[] = {"False", "None",   "True",  "and",    "as",       "assert", "async",  "await",
                                          "break", "class",  "continue", "def", "del",      "elif",   "else",   "except",
                                          "finally", "for",  "from",  "global", "if",       "import", "in",     "is",
                                          "lambda", "nonlocal", "not", "or",    "pass",     "raise",  "return", "try",
                                          "while", "with",   "yield"};
  bool ok = !name.empty() && name.size() <= 200 && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  for (const char* k : kKeywords) ok &= name != k;
  if (!ok) {
    throw Error(ErrorKind::kUsage, "--class '" + EscapeText(name) +
                                       "' is not a class name: letters, digits and _, not starting with a digit, "
                                       "not a Python keyword (it becomes __torch__.NAME)");
  }
}

// An archive checked by tsctl's reader and held open: LibTorch loads that
// file (the descriptor, inherited by the child as /proc/self/fd/N), not
// whatever the path names by the time the child starts. Keep it alive
// until the child has run.
struct CheckedArchive {
  Archive archive;
  std::string load_path;
};
// Non-archives and damaged ones are diagnosed by tsctl's own reader (one
// line, kFormat: clearer than LibTorch's messages); then validate's static
// checks (CheckBeforeLoad: kRefused, one line naming them). LibTorch sees
// neither.
CheckedArchive OpenForLibTorch(const std::string& path, bool allow_load_hooks) {
  RequireRegularFile(path, "LibTorch loads");
  CheckedArchive c{Archive::OpenSound(path), ""};
  c.load_path = CheckForLibTorch(c.archive, path, allow_load_hooks);
  return c;
}

// bench and --sweep: the archive checked by its format's row, which fills
// the options and holds it open (ZipModel::prepare_bench).
Archive PrepareBench(BenchOptions& options, ResolvedInputs& inputs) {
  RequireRegularFile(options.path, "LibTorch loads");
  Archive archive = Archive::OpenModel(OpenFileSource(options.path));
  const ZipModel& model = ZipModelOf(archive);
  return model.prepare_bench(std::move(archive), options, inputs);
}

}  // namespace

BuildInfo GetBuildInfo() {
  return RunTorchChild(BuildInfoRequest{}, {}).Take<BuildInfo>("asking LibTorch what it is");
}

std::string LibTorchRegistry() {
  return RunTorchChild(BuildInfoRequest{.registry = true}, {}).Take<BuildInfo>("asking LibTorch what it registers").registry;
}

std::string Graph(const GraphOptions& options) {
  const CheckedArchive checked = OpenForLibTorch(options.path, options.allow_load_hooks);
  GraphOptions o = options;
  o.load_path = checked.load_path;
  return RunTorchChild(GraphRequest{.options = o}, {.timeout_seconds = o.timeout_seconds})
      .Take<std::string>("loading the archive and printing its graph");
}

std::string CompiledCode(const std::string& path, const std::string& method,
                         const std::vector<std::string>& load_libraries, bool allow_load_hooks) {
  const CheckedArchive checked = OpenForLibTorch(path, allow_load_hooks);
  const std::string& load = checked.load_path.empty() ? path : checked.load_path;
  return RunTorchChild(CompiledCodeRequest{.path = load, .method = method, .load_libraries = load_libraries}, {})
      .Take<std::string>("loading the archive and printing its code");
}

BenchResult Bench(BenchOptions options) {
  if (!options.etdump_path.empty()) throw Error(ErrorKind::kUsage, "--etdump applies to an ExecuTorch program (.pte)");
  ResolvedInputs inputs;
  const Archive checked = PrepareBench(options, inputs);  // kFormat before any LibTorch work; held until the child ran
  // --save-outputs: the child writes a temporary file, renamed into place
  // only when the benchmark succeeded.
  const std::string save_to = options.save_outputs_path;
  std::optional<TempFile> saved;
  if (!save_to.empty()) options.save_outputs_path = saved.emplace(OutputSuffix(save_to)).path;
  BenchResult r;
  try {
    r = RunTorchChild(BenchRequest{.options = options},
                      {.timeout_seconds = options.timeout_seconds, .memory_bytes = options.memory_limit_bytes,
                       .max_output_bytes = options.max_output_bytes},
                      options.progress)
            .Take<BenchResult>("benchmarking");
  } catch (const Error& e) {
    // LibTorch's load error naming what it lacks: which releases have it.
    const std::string note = e.kind() == ErrorKind::kTorch ? CompatLoadNote(e.what(), TSCTL_LIBTORCH_VERSION) : "";
    if (note.empty()) throw;
    throw Error(e.kind(), e.what() + note, e.detail());
  }
  r.warmup_count = options.warmup;
  r.warmup_seconds = options.warmup >= 0 ? 0 : options.warmup_seconds;
  r.iters_count = options.iters;
  r.duration_seconds = options.iters > 0 ? 0 : options.duration_seconds;
  if (saved) {
    WriteFileAtomically(save_to, saved->Read());
    r.saved_outputs = save_to;
  }
  return r;
}

std::vector<SweepRow> Sweep(BenchOptions options, double timeout_seconds,
                            const std::function<void(size_t done, size_t total)>& progress) {
  if (!options.save_outputs_path.empty()) throw Error(ErrorKind::kUsage, "--save-outputs cannot be combined with --sweep");
  // An AOTInductor package sweeps its own settings (threads, inference mode).
  ResolvedInputs inputs;
  const Archive checked = PrepareBench(options, inputs);
  return RunSweep(options, timeout_seconds, progress);
}

MakeResult Trace(const TraceOptions& options) {
  std::optional<CheckedArchive> checked;
  TraceOptions o = options;
  if (o.load_path.empty()) {  // else the caller holds the checked archive open
    checked.emplace(OpenForLibTorch(o.path, o.allow_load_hooks));
    o.load_path = checked->load_path;
  }
  return RunTorchChild(TraceRequest{.options = o}, {}).Take<MakeResult>("tracing");
}

MakeResult Script(const ScriptOptions& options) {
  return RunTorchChild(ScriptRequest{.options = options}, {}).Take<MakeResult>("compiling the source");
}

namespace {

// trace of an archive: its example inputs by ResolveInputs (the tracer takes
// tensors only: stored specs, recorded values, or inferred candidates that
// are all tensors), then the trace in a child; --save-outputs written only
// when the trace matched.
MakeResult TraceArchiveOf(const MakeRequest& r) {
  TraceOptions o;
  static_cast<MakeSpec&>(o) = r;
  o.path = r.path;
  o.allow_load_hooks = r.allow_load_hooks;
  const CheckedArchive checked = OpenForLibTorch(r.path, r.allow_load_hooks);  // one reading; LibTorch loads the file checked
  o.load_path = checked.load_path;
  const ExampleInputs example = FindExampleInputs(checked.archive, r.path, r, "tracing");
  o.inputs = example.inputs;
  o.load_inputs_path = example.load_inputs_path;
  const std::string& note = example.note;
  std::optional<TempFile> saved;
  if (!r.save_outputs_path.empty()) o.save_outputs_path = saved.emplace(OutputSuffix(r.save_outputs_path)).path;
  MakeResult result = Trace(o);
  result.input_note = note;
  if (saved && !result.diverged) {
    WriteFileAtomically(r.save_outputs_path, saved->Read());
    result.saved_outputs = r.save_outputs_path;
  }
  return result;
}

}  // namespace

MakeResult Make(const MakeRequest& r) {
  if (r.mode == "export") return Export(r);
  const bool trace = r.mode == "trace";
  if (r.python.empty() == r.path.empty()) {
    throw Error(ErrorKind::kUsage, trace ? "give an ARCHIVE or --python FILE:FACTORY (one of them)"
                                         : "give a TorchScript SOURCE file or --python FILE:NAME (one of them)");
  }
  if (!r.save_outputs_path.empty() && !(trace && r.python.empty())) {
    throw Error(ErrorKind::kUsage, "--save-outputs applies to tracing an archive (not to script or --python)");
  }
  if (!r.python.empty()) {
    if (trace && r.method != "forward") {
      throw Error(ErrorKind::kUsage, "--method applies to tracing an archive; --python traces forward");
    }
    auto [file, name] = SplitPythonSpec(r.python);
    PythonRequest p;
    static_cast<MakeSpec&>(p) = r;
    p.file = file;
    p.name = name;
    p.mode = r.mode;
    // In a child, as export and data loaders run: neither Python nor its
    // torch enters this process, and an interrupt kills it.
    return RunTorchChild(PythonMakeRequest{.request = p}, {})
        .Take<MakeResult>((trace ? "tracing " : "scripting ") + p.name);
  }
  if (trace) return TraceArchiveOf(r);
  RequireClassName(r.class_name);  // before anything is read, compiled or written
  std::ifstream in(r.path);
  if (!in) throw Error(ErrorKind::kIo, std::string("cannot read: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  ScriptOptions o;
  static_cast<MakeSpec&>(o) = r;
  o.source = text.str();
  o.source_name = r.path;
  o.class_name = r.class_name;
  MakeResult result = Script(o);
  if (!r.check_inputs.empty()) {
    // As documented: ignored, with a note (a source has no eager model to compare with).
    result.input_note = "--check-input ignored: it applies to script --python (a .ts source has no eager model to compare with)";
  }
  return result;
}

bool PythonSupportBuilt() { return PythonPluginBuilt(); }

}  // namespace tsctl
