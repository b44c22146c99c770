// The commands that need LibTorch: their options, results and entry points.
// The work is done by a plugin library (libtsctl_torch.so; its interface and
// what crosses it are private, in lib/src/plugin/) loaded on first use, so
// that commands that only read archives (inspect, code, stamp) never pay
// LibTorch's start-up.
#pragma once

#include <functional>
#include <ostream>
#include <cstdint>
#include <string>
#include <vector>

#include "tsctl/bench.h"
#include "tsctl/inputs.h"
#include "tsctl/output.h"
#include "tsctl/run_spec.h"
#include "tsctl/pt2_run.h"

namespace tsctl {

// What the LibTorch plugin runs of .pt2 archives.
struct Pt2Support {
  // AOTInductor packages, through torch::inductor::AOTIModelPackageLoader (LibTorch 2.x).
  bool runs_aoti = false;
  // Why it runs no exported program ("" if it does).
  std::string program_unavailable = "this LibTorch has no C++ runner of exported programs";
};

struct BuildInfo {
  std::string libtorch_version;  // e.g. "1.13.0" as LibTorch's headers say
  bool cuda_compiled = false;    // this LibTorch was built with CUDA
  bool cuda_available = false;   // and a device is visible now
  int cuda_devices = 0;
  std::string cuda_runtime;      // e.g. "13.0" when cuda_compiled and its libraries are loaded
  std::string cuda_note;         // why a CUDA build's libraries were not loaded (no driver), else ""
  std::string library_path;      // the LibTorch library this process loaded
  std::string cxx_standard;      // what tsctl was compiled as
  // The archive format versions this LibTorch reads (caffe2::serialize's
  // kMin/kMaxSupportedFileFormatVersion); 0 from a plugin that predates them.
  int64_t min_file_format = 0;
  int64_t max_file_format = 0;
  Pt2Support pt2;
  // What this LibTorch registers, in tsctl compat's data format (asked for
  // by tsctl compat --dump-runtime torch; "" otherwise).
  std::string registry;
};

// Every options struct below has `load_libraries`: operator libraries the
// plugin loads (LoadOperatorLibraries) in the process that loads the
// archive, before it.

struct GraphOptions {
  std::string path;
  // What LibTorch loads: the archive tsctl checked, as its open descriptor
  // (/proc/self/fd/N, inherited by the child); set by tsctl. Empty: `path`.
  std::string load_path;
  std::string method = "forward";
  bool inlined = false;
  bool frozen = false;  // torch::jit::freeze + optimize_for_inference
  // --inlined: refused (kIo, one line) when inlining would make more nodes
  // than this: helpers that call each other twice double it per level.
  uint64_t max_nodes = 1000000;
  // kNodes (tsctl report's graph): one line per node, in order: module
  // (the instance names of its inlined call stack, joined by '.'), kind
  // (input, op, output), label (the node's kind: aten::conv2d) and the
  // indices of the earlier lines it takes values from, joined by ','; tab
  // separated. Constants and attribute reads are left out.
  enum class Format { kText, kDot, kNodes } format = Format::kText;
  std::vector<std::string> load_libraries;
  double timeout_seconds = 0;  // the LibTorch child's limit; 0: the default (kDefaultChildTimeout)
  // --allow-load-hooks: an archive whose only failed static check is
  // ts.hooks is loaded anyway (Graph checks it first, as validate does).
  // This process's decision: not sent to the child.
  bool allow_load_hooks = false;
};

// tsctl trace / tsctl script: the run (MakeSpec's RunSpec: the method
// traced, its example inputs or --load-inputs, libraries) and what is made
// of it (MakeSpec).
struct TraceOptions : MakeSpec {
  std::string path;  // the archive whose method is traced
  // What LibTorch loads: the archive tsctl checked, as its open descriptor
  // (/proc/self/fd/N, inherited by the child); set by tsctl. Empty: `path`.
  std::string load_path;
  bool allow_load_hooks = false;  // --allow-load-hooks (Trace checks the archive first; not sent to the child)
  std::string save_outputs_path;  // the trace's outputs on the example inputs (torch.save format)
};

// RunSpec's inputs (optional): run once and recorded as extra/tsctl_inputs.json.
// MakeSpec's check inputs and tolerances are not used (a source has no
// eager model to compare with).
struct ScriptOptions : MakeSpec {
  std::string source;       // TorchScript source: methods using torch.*
  std::string source_name;  // for messages
  std::string class_name = "Net";
};

struct CheckReport {
  std::string inputs;  // "2x3x64x64:float32, 4:int64"
  bool matched = false;
  double max_abs = 0;
  std::string error;
};

struct MakeResult {
  std::string output;
  uint64_t bytes = 0;
  std::vector<std::string> methods;
  std::vector<std::string> inputs;  // recorded in extra/tsctl_inputs.json
  std::vector<CheckReport> checks;
  bool diverged = false;  // a check input gave different outputs: nothing written
  std::vector<std::string> warnings;  // e.g. Python's TracerWarnings
  // Where trace's example inputs came from when none were given ("inputs
  // from inferred (...); pin them with --input ..."); shown on stderr.
  std::string input_note;
  std::string saved_outputs;  // --save-outputs: where the outputs were written (set by the parent)
  // What was written: "" (a TorchScript archive), "pt2-program" (tsctl
  // export: torch.export.save) or "pt2-aoti" (export --aoti).
  std::string format;
  std::vector<std::string> dynamic;  // export: symbolic input sizes ("x.shape[0] in [1, inf]")
};


// The entry points of the commands that need LibTorch. Each checks the
// archive without LibTorch first (a non-archive is kFormat with tsctl's own
// diagnosis; one that fails any of validate's static checks, zip.*, ts.*
// with ts.hooks, pt2.*, is kRefused naming them, and never loaded: the
// options' allow_load_hooks lets ts.hooks alone through), then does the work
// in a child of the LibTorch server (a fresh
// process that loaded the plugin once; this process never loads LibTorch or
// Python), so that a crash or abort inside LibTorch on
// a hostile archive is one error (kTorch, naming the signal) instead of a dead
// tsctl. They throw tsctl::Error: kUsage (no such method, bad options), kTorch
// (LibTorch rejected the archive or crashed), kUnavailable (no plugin, no
// CUDA), kIo, kFormat, kRefused.

// LibTorch's version and CUDA support (tsctl --version), asked in a child.
BuildInfo GetBuildInfo();

// The IR of one method of a TorchScript archive, as Python prints `m.graph`
// (or `inlined_graph`), or as Graphviz DOT. (Other formats' graphs: their
// rows, tsctl/format.h.)
std::string Graph(const GraphOptions& options);

// What Python's `m.code` (or `m.<method>.code`) prints for the archive.
// `load_libraries` are loaded first (LoadOperatorLibraries).
// The archive is checked first, as by Graph.
std::string CompiledCode(const std::string& path, const std::string& method,
                         const std::vector<std::string>& load_libraries = {}, bool allow_load_hooks = false);

// tsctl bench: loads and times a method. Inputs not given in `options` are
// taken from the archive (extra/tsctl_inputs.json, traced inputs).
BenchResult Bench(BenchOptions options);

// tsctl bench --sweep: Bench once per combination of execution settings,
// each in its own child; failures become rows with an error. Throws at once
// for errors every combination would share (kUsage, kUnavailable).
std::vector<SweepRow> Sweep(BenchOptions options, double timeout_seconds,
                            const std::function<void(size_t done, size_t total)>& progress = {});

// tsctl trace: traces a method of an archive with LibTorch's tracer into a
// new archive, written atomically; nothing is written when a check input
// diverges (result.diverged).
MakeResult Trace(const TraceOptions& options);

// tsctl script: compiles TorchScript source into an archive.
MakeResult Script(const ScriptOptions& options);

// What `tsctl trace` and `tsctl script` are asked: an archive (trace), a
// TorchScript source file (script), or a Python model (--python FILE.py:NAME).
// The run (RunSpec): the method (trace of an archive), example inputs,
// --load-inputs and --no-infer (trace of an archive), libraries.
struct MakeRequest : MakeSpec {
  std::string mode;    // "trace", "script" or "export"
  std::string path;    // trace: the archive; script: the source file
  std::string python;  // FILE.py:NAME instead of `path`
  std::string class_name = "Net";  // script of a source file
  std::string save_outputs_path;  // trace of an archive: the trace's outputs (--save-outputs)
  bool allow_load_hooks = false;  // trace of an archive: --allow-load-hooks (CheckBeforeLoad)
  bool aoti = false;              // export: an AOTInductor package for the CPU (--aoti)
  bool dynamic_batch = false;     // export: dimension 0 of every input is one symbolic size (--dynamic-batch)
  bool strict = false;            // export: torch.export.export(strict=True) (--strict)
};

// tsctl trace / tsctl script / tsctl export: checks the request (kUsage),
// then traces or compiles through LibTorch or, for --python, through the
// embedded-Python plugin (kUnavailable without Python support), either way
// in a child (the model is the user's own code: the Python child gets the
// caller's environment and limits, not Landlock or seccomp). export always
// takes --python: torch.export.export, saved as a .pt2 (an AOTInductor
// package with `aoti`) with the producer record and the example input specs
// stamped into extra/, written atomically; kUnavailable where the embedded
// Python's torch has no torch.export.
MakeResult Make(const MakeRequest& request);

// Renderers of a MakeResult; `mode` is "trace" or "script".
std::string RenderJson(const MakeResult& result);
void RenderText(const MakeResult& result, std::ostream& out);
// The one-line error for a diverging result ("the trace diverges from the model on ...").
std::string DivergenceMessage(const MakeResult& result, const std::string& mode);

// JSON documents of graph and code output (schema_version, archive, text),
// as text without a newline.
std::string RenderGraphJson(const GraphOptions& options, const std::string& graph);
std::string RenderCodeJson(const std::string& path, const std::string& compiled_method, const std::string& code);
// trace/script/export's, graph's and code's documents in `format` (text,
// json; graph also dot, already in the graph's text).
std::string Render(const MakeResult& result, OutputFormat format);
std::string RenderGraph(const GraphOptions& options, const std::string& graph, OutputFormat format);
std::string RenderCode(const std::string& path, const std::string& compiled_method, const std::string& code,
                       OutputFormat format);

// The command table's promise (apps/tsctl/main.cc): a command declared to
// need no LibTorch never loads the plugin. After this call every attempt to
// load it throws tsctl::Error (kUnavailable) naming `command`, instead of
// paying LibTorch's start-up silently.
void ForbidLibTorch(const std::string& command);

// The sandbox around every LibTorch child (docs/manual/sandbox.md): on
// unless --no-sandbox (SetSandbox(false)) says the archives are trusted.
// SandboxDescription(): "on (seccomp, Landlock ABI 3)", the layers this
// kernel gives, or "off (--no-sandbox)".
void SetSandbox(bool on);
std::string SandboxDescription();

// True if this tsctl was built with the embedded-Python plugin.
bool PythonSupportBuilt();

// The libraries listed in TSCTL_LOAD_LIBRARIES (colon-separated, empty parts
// skipped); the CLI appends them to --load-library.
std::vector<std::string> OperatorLibrariesFromEnvironment();

}  // namespace tsctl
